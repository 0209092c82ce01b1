/**
 * The shared piscina pool for CPU-heavy pure functions. Created lazily (no threads until the first task),
 * served to actors as the host service `cpu-pool`: `{ type: 'run', task, input }` → the task's result.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { TorusError, ValidationError } from '../protocols/errors.js';
import type { Body } from '../protocols/mailbox.js';
import { CPU_TASKS } from './cpu-tasks.js';
import { siblingModule } from './module-url.js';

export class CpuPool {
  #pool: Piscina | undefined;
  #closed = false;
  readonly #maxThreads: number;

  constructor(maxThreads = Math.max(1, availableParallelism() - 1)) {
    this.#maxThreads = maxThreads;
  }

  async run<T = unknown>(task: string, input: unknown): Promise<T> {
    if (this.#closed) throw new TorusError('TORUS_SHUTTING_DOWN', 'the cpu pool is closed');
    if (!(task in CPU_TASKS))
      throw new TorusError('TORUS_PROTOCOL_INVALID', `unknown cpu task ${JSON.stringify(task)}`, { task });
    this.#pool ??= new Piscina({
      filename: siblingModule(import.meta.url, './cpu-task-worker').href,
      minThreads: 0,
      maxThreads: this.#maxThreads,
      idleTimeout: 5_000,
    });
    return (await this.#pool.run({ task, input })) as T;
  }

  /** The `cpu-pool` host service handler. */
  async serve(body: Body): Promise<unknown> {
    if (body.type !== 'run') throw new ValidationError('body', 'type', 'cpu-pool only answers `run`');
    if (typeof body.task !== 'string') throw new ValidationError('body', 'task', 'expected a task name');
    return this.run(body.task, body.input);
  }

  get threads(): number {
    return this.#pool?.threads.length ?? 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.destroy();
  }
}
