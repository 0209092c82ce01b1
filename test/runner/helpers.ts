/** Shared test helpers: temp dirs, pid liveness (orphan checks), waiting on a condition. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'torus-runner-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0): look at its state.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every pid in the list is gone (waits a little: the kernel reaps asynchronously). */
export async function allGone(pids: Iterable<number>, timeoutMs = 5000): Promise<number[]> {
  const list = [...pids];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const left = list.filter(alive);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 25));
  }
}
