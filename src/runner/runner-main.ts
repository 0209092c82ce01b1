/**
 * Runner process entry (spawned by RunnerProcess, one per (instance, node)). The channel is fd 3, a
 * socketpair: frames down, frames up. First frame must be `start`. When the channel closes the supervisor
 * is gone, so the runner stops its work and exits: no runner outlives its node.
 */
import net from 'node:net';
import { ValidationError } from '../core/errors.js';
import { decodeDownFrame, type DownFrame, type UpFrame } from '../protocols/runner.js';
import { execWorkload } from './exec-workload.js';
import { FrameChannel } from './frame-channel.js';
import { ringWorkload } from './ring-workload.js';
import { RunnerChild } from './runner-child.js';

let child: RunnerChild | undefined;
let channel: FrameChannel<DownFrame, UpFrame>;

/**
 * Test hooks, only with TORUS_RUNNER_TEST_HOOKS=1: `hang` ignores SIGTERM and shutdown frames (a stuck
 * runner, for the SIGKILL escalation test); `close-channel` (a task op) closes fd 3 but stays alive (a
 * channel closed in normal running).
 */
const hooks = new Set(process.env.TORUS_RUNNER_TEST_HOOKS === '1' ? (process.env.TORUS_RUNNER_TEST_HOOK ?? '').split(',') : []);
let keepAlive: NodeJS.Timeout | undefined;

function exit(code: number): void {
  void channel.end().finally(() => process.exit(code));
}

function onFrame(frame: DownFrame): void {
  if (hooks.has('hang') && frame.type === 'shutdown') return;
  if (hooks.has('close-channel') && frame.type === 'task' && frame.op === 'close-channel') {
    keepAlive = setInterval(() => {}, 1000);
    channel.send({ type: 'ack', taskId: frame.taskId });
    void channel.end().then(() => channel.close());
    return;
  }
  if (child) return child.handle(frame);
  if (frame.type !== 'start') {
    process.stderr.write(`runner: ${frame.type} before start\n`);
    return;
  }
  const { config } = frame;
  const diagnostic = (message: string): void => {
    try {
      channel.send({ type: 'diagnostic', level: 'warn', message });
    } catch { /* channel closed */ }
  };
  const workload = config.workload.kind === 'exec' ? execWorkload(config, diagnostic) : ringWorkload(config, diagnostic);
  child = new RunnerChild(config, workload, { send: (f) => channel.send(f), exit });
}

channel = new FrameChannel<DownFrame, UpFrame>('runner channel', new net.Socket({ fd: 3, readable: true, writable: true }), decodeDownFrame, {
  onFrame,
  onInvalid: (err: ValidationError) => process.stderr.write(`runner: invalid frame: ${err.message}\n`),
  onClose: () => {
    if (keepAlive) return;
    if (child) void child.orphaned();
    else process.exit(0);
  },
});

process.on('SIGTERM', () => {
  if (hooks.has('hang')) return;
  // Graceful: same as a shutdown from a vanished supervisor.
  if (child) void child.orphaned();
  else process.exit(0);
});

process.on('uncaughtException', (err) => {
  try {
    channel.send({ type: 'fatal', message: err.stack ?? err.message });
  } catch { /* channel closed */ }
  process.stderr.write(`runner: uncaught ${err.stack ?? err.message}\n`);
  if (child) child.fail(`uncaught: ${err.message}`);
  else process.exit(1);
});
