/**
 * Runner process entry (spawned by RunnerProcess, one per (instance, node)). The channel is fd 3, a
 * socketpair: frames down, frames up. First frame must be `start`. When the channel closes the supervisor
 * is gone, so the runner stops its work and exits: no runner outlives its node.
 */
import net from 'node:net';
import type { ValidationError } from '../../../protocols/errors.js';
import { decodeDownFrame, type DownFrame, type UpFrame } from '../../../protocols/runner.js';
import { FrameChannel } from '../shared/frame-channel.js';
import { RunnerChild } from './runner-child.js';
import type { WorkloadFactory } from './workload.js';

let child: RunnerChild | undefined;
let channel: FrameChannel<DownFrame, UpFrame>;

/**
 * Test hooks, only with TORUS_RUNNER_TEST_HOOKS=1: `hang` ignores SIGTERM and shutdown frames (a stuck
 * runner, for the SIGKILL escalation test); `close-channel` (a task op) closes fd 3 but stays alive (a
 * channel closed in normal running).
 */
const hooks = new Set(
  process.env.TORUS_RUNNER_TEST_HOOKS === '1' ? (process.env.TORUS_RUNNER_TEST_HOOK ?? '').split(',') : [],
);
let keepAlive: NodeJS.Timeout | undefined;

function exit(code: number): void {
  void channel.end().finally(() => process.exit(code));
}

let starting = false;
const early: DownFrame[] = [];

function onFrame(frame: DownFrame): void {
  if (hooks.has('hang') && frame.type === 'shutdown') return;
  if (hooks.has('close-channel') && frame.type === 'task' && frame.op === 'close-channel') {
    keepAlive = setInterval(() => {}, 1000);
    channel.send({ type: 'ack', taskId: frame.taskId });
    void channel.end().then(() => channel.close());
    return;
  }
  if (child) return child.handle(frame);
  if (starting) {
    early.push(frame); // arrived while the workload module loads: handled in order once it has
    return;
  }
  if (frame.type !== 'start') {
    process.stderr.write(`runner: ${frame.type} before start\n`);
    return;
  }
  starting = true;
  start(frame.config).catch((err: unknown) => {
    process.stderr.write(`runner: cannot start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

/** Loads only the workload this runner needs (the ring engine is large; an exec runner never touches it). */
async function start(config: Extract<DownFrame, { type: 'start' }>['config']): Promise<void> {
  const diagnostic = (message: string): void => {
    try {
      channel.send({ type: 'diagnostic', level: 'warn', message });
    } catch {
      /* channel closed */
    }
  };
  const factory: WorkloadFactory =
    config.workload.kind === 'exec'
      ? (await import('./exec-workload.js')).execWorkload
      : (await import('./ring-workload.js')).ringWorkload;
  child = new RunnerChild(config, factory(config, diagnostic), { send: (f) => channel.send(f), exit });
  for (const frame of early.splice(0)) child.handle(frame);
}

channel = new FrameChannel<DownFrame, UpFrame>(
  'runner channel',
  new net.Socket({ fd: 3, readable: true, writable: true }),
  decodeDownFrame,
  {
    onFrame,
    onInvalid: (err: ValidationError) => process.stderr.write(`runner: invalid frame: ${err.message}\n`),
    onClose: () => {
      if (keepAlive) return;
      if (child) void child.orphaned();
      else process.exit(0);
    },
  },
);

process.on('SIGTERM', () => {
  if (hooks.has('hang')) return;
  // Graceful: same as a shutdown from a vanished supervisor.
  if (child) void child.orphaned();
  else process.exit(0);
});

process.on('uncaughtException', (err) => {
  try {
    channel.send({ type: 'fatal', message: err.stack ?? err.message });
  } catch {
    /* channel closed */
  }
  process.stderr.write(`runner: uncaught ${err.stack ?? err.message}\n`);
  if (child) child.fail(`uncaught: ${err.message}`);
  else process.exit(1);
});
