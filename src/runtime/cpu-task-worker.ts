/** The piscina worker entry: looks the named task up in CPU_TASKS and runs it. */
import { TorusError } from '../protocols/errors.js';
import { CPU_TASKS } from './cpu-tasks.js';
import { siblingModule } from './module-url.js';

type TaskFn = (input: unknown) => unknown;
const loaded = new Map<string, TaskFn>();

export default async function runTask({ task, input }: { task: string; input: unknown }): Promise<unknown> {
  let fn = loaded.get(task);
  if (!fn) {
    const path = CPU_TASKS[task];
    if (!path) throw new TorusError('TORUS_PROTOCOL_INVALID', `unknown cpu task ${JSON.stringify(task)}`, { task });
    const mod = (await import(siblingModule(import.meta.url, path).href)) as { default: TaskFn };
    fn = mod.default;
    loaded.set(task, fn);
  }
  return fn(input);
}
