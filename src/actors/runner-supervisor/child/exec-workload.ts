/**
 * `exec` workload: connect writes the MLX ring hostfile, load and warm-up have nothing to do, and a task
 * runs the user's command with the placement in its environment (execEnv) and reports its exit. The
 * command's output goes to the runner's stdout/stderr, which the supervisor captures into the runner log.
 * The command stays in the runner's process group, so the supervisor's group kill reaches it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { writeFileAtomicSync } from '../../../native/durable-fs.js';
import { dirname } from 'node:path';
import { TorusError } from '../../../protocols/errors.js';
import { decodeHostfile, encodeHostfile } from '../../../protocols/hostfile.js';
import type { RunnerStartConfig } from '../../../protocols/runner.js';
import type { RunnerWorkload } from './workload.js';

/** How long a cancelled command gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;

export function execWorkload(config: RunnerStartConfig, diagnostic: (message: string) => void): RunnerWorkload {
  if (config.workload.kind !== 'exec') throw new TorusError('TORUS_INTERNAL', 'exec workload needs an exec config');
  const workload = config.workload;
  const running = new Set<ChildProcess>();

  const stop = (child: ChildProcess): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, KILL_GRACE_MS).unref();
  };

  return {
    async connect() {
      await mkdir(dirname(config.hostfilePath), { recursive: true, mode: 0o700 });
      writeFileAtomicSync(config.hostfilePath, encodeHostfile(decodeHostfile(config.hosts)), { mode: 0o600 });
    },
    async load(report) {
      report(config.layerEnd - config.layerStart);
    },
    async warmup() {},
    run(op, params, signal) {
      const override = params.command;
      const command =
        Array.isArray(override) && override.every((x) => typeof x === 'string') && override.length > 0
          ? (override as string[])
          : [...workload.command];
      const [file, ...args] = command as [string, ...string[]];
      return new Promise((resolve, reject) => {
        const started = performance.now();
        const child = spawn(file, args, {
          cwd: workload.cwd,
          env: { ...process.env, ...config.env },
          stdio: ['ignore', 'inherit', 'inherit'],
        });
        running.add(child);
        const onAbort = (): void => stop(child);
        signal.addEventListener('abort', onAbort, { once: true });
        child.once('error', (err) => {
          running.delete(child);
          signal.removeEventListener('abort', onAbort);
          diagnostic(`exec ${file}: ${err.message}`);
          reject(new TorusError('TORUS_RUNNER_FAILED', `cannot start ${file}: ${err.message}`));
        });
        child.once('exit', (code, sig) => {
          running.delete(child);
          signal.removeEventListener('abort', onAbort);
          const result = { op, exitCode: code, signal: sig, durationMs: Math.round(performance.now() - started) };
          if (signal.aborted) reject(signal.reason);
          else if (code === 0) resolve(result);
          else
            reject(
              new TorusError(
                'TORUS_RUNNER_FAILED',
                `${file} exited with ${code !== null ? `code ${code}` : `signal ${sig}`}`,
                result,
              ),
            );
        });
      });
    },
    async close() {
      const waits = [...running].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) resolve();
            else child.once('exit', () => resolve());
            stop(child);
          }),
      );
      await Promise.all(waits);
    },
  };
}
