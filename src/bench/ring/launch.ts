/**
 * Starting benchmark ranks and collecting their JSON lines: lab and loopback modes spawn one child
 * process per rank. A running cluster is benchmarked through its API instead (`bench ring --live`,
 * src/bench/live/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { childExecArgv, siblingModule } from '../../runtime/module-url.js';
import type { RankJob } from './rank-main.js';
import type { RankResult } from './sweep.js';

export type RankMessage =
  | { type: 'ready'; kernel: string; bidirectional?: boolean }
  | { type: 'row'; row: RankResult }
  | { type: 'done'; bytesRead?: number; bytesCopied?: number }
  | { type: 'error'; code: string; message: string };

export interface RankLauncher {
  /** Runs one rank per job (job i is rank i) and reports each rank's messages; resolves when all ranks ended. */
  run(jobs: readonly RankJob[], onMessage: (rank: number, message: RankMessage) => void): Promise<void>;
}

/** Spawns the rank entry through `start(rank, argv)` (plain spawn, or `lab.spawn` inside a namespace). */
export function processLauncher(
  start: (rank: number, command: string, args: string[]) => ChildProcess,
  overallTimeoutMs: number,
): RankLauncher {
  return {
    async run(jobs, onMessage) {
      const entry = siblingModule(import.meta.url, './rank-main').pathname;
      const children = jobs.map((job, rank) =>
        start(rank, process.execPath, [
          ...childExecArgv(import.meta.url),
          entry,
          Buffer.from(JSON.stringify(job)).toString('base64'),
        ]),
      );
      const timer = setTimeout(() => {
        for (const c of children) c.kill('SIGKILL');
      }, overallTimeoutMs);
      try {
        await Promise.all(
          children.map(
            (child, rank) =>
              new Promise<void>((resolve) => {
                let pending = '';
                let ended = false;
                let stderr = '';
                child.stderr?.on('data', (chunk: Buffer) => {
                  stderr = (stderr + chunk.toString()).slice(-2000);
                });
                child.stdout?.on('data', (chunk: Buffer) => {
                  pending += chunk.toString();
                  const lines = pending.split('\n');
                  pending = lines.pop() ?? '';
                  for (const line of lines) {
                    if (!line.trim()) continue;
                    try {
                      const message = JSON.parse(line) as RankMessage;
                      if (message.type === 'done' || message.type === 'error') ended = true;
                      onMessage(rank, message);
                    } catch {
                      /* a stray non-JSON line */
                    }
                  }
                });
                child.once('exit', (code, signal) => {
                  if (!ended)
                    onMessage(rank, {
                      type: 'error',
                      code: 'TORUS_RUNNER_FAILED',
                      message: `rank ${rank} exited (${signal ?? code}) ${stderr.trim().split('\n').slice(-3).join(' / ')}`,
                    });
                  resolve();
                });
                child.once('error', (error) => {
                  onMessage(rank, { type: 'error', code: 'TORUS_RUNNER_FAILED', message: error.message });
                  resolve();
                });
              }),
          ),
        );
      } finally {
        clearTimeout(timer);
        for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      }
    },
  };
}

export function loopbackLauncher(overallTimeoutMs: number): RankLauncher {
  return processLauncher(
    (_rank, command, args) => spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }),
    overallTimeoutMs,
  );
}
