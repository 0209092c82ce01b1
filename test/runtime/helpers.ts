import type { Test } from 'tap';
import { Runtime, type RuntimeOptions } from '../../src/runtime/runtime.js';

export const probeModule = new URL(
  `./fixtures/probe-actor${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

export const fastPolicy = { maxRestarts: 3, periodMs: 300_000, initialDelayMs: 50, maxDelayMs: 1_000, factor: 2 };

/** A runtime that is always shut down, and that records unhandled rejections while the test runs. */
export function testRuntime(t: Test, options: RuntimeOptions = {}): { runtime: Runtime; unhandled: unknown[] } {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  process.on('unhandledRejection', onUnhandled);
  const runtime = new Runtime({ restartPolicy: fastPolicy, ...options });
  t.teardown(async () => {
    await runtime.kill();
    process.off('unhandledRejection', onUnhandled);
  });
  return { runtime, unhandled };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
