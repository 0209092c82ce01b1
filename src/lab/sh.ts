/** Thin process helpers for the lab: run `ip`/`tc` (async and sync), list namespaces, check a pid. */
import { execFile, execFileSync } from 'node:child_process';
import { TorusError } from '../protocols/errors.js';

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], opts: { timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: opts.timeoutMs ?? 15_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) {
        reject(
          new TorusError(
            'TORUS_INTERNAL',
            `${cmd} ${args.join(' ')} failed: ${String(stderr).trim() || error.message}`,
            { cmd, args: [...args] },
            { cause: error },
          ),
        );
      } else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Synchronous variant for exit handlers (where no promise will ever settle). Never throws. */
export function runSyncQuiet(cmd: string, args: readonly string[]): string {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).toString();
  } catch {
    return '';
  }
}

export function parseNetnsList(text: string): string[] {
  // `ip netns list` prints "name" or "name (id: 3)".
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n.length > 0);
}

export async function listNetns(): Promise<string[]> {
  return parseNetnsList((await run('ip', ['netns', 'list'])).stdout);
}

export function listNetnsSync(): string[] {
  return parseNetnsList(runSyncQuiet('ip', ['netns', 'list']));
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Pids of processes inside a namespace (`ip netns pids`), sync so exit handlers can use it. */
export function netnsPidsSync(ns: string): number[] {
  return runSyncQuiet('ip', ['netns', 'pids', ns])
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/** Kills every process inside the namespace (they are the lab's: nothing else runs there), then deletes it. */
export function destroyNetnsSync(ns: string): void {
  for (const pid of netnsPidsSync(ns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  runSyncQuiet('ip', ['netns', 'del', ns]);
}
