/** A cluster owner that is not a tap test (the lab benchmarks): teardowns run in reverse at close, a failure marks it for log dumps. */
import type { ClusterTest } from './node-cluster.js';

export class BenchOwner implements ClusterTest {
  readonly #teardowns: (() => unknown)[] = [];
  ok = true;
  teardown(fn: () => unknown): void {
    this.#teardowns.push(fn);
  }
  comment(...parts: unknown[]): void {
    process.stderr.write(`${parts.join(' ')}\n`);
  }
  passing(): boolean {
    return this.ok;
  }
  async close(): Promise<void> {
    for (const fn of this.#teardowns.reverse())
      await Promise.resolve()
        .then(fn)
        .catch((e: unknown) => this.comment(`teardown: ${String(e)}`));
  }
}
