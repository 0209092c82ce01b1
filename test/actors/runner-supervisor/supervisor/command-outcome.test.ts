// How an exec command's end becomes the runner's reason / exit code: a table of cases.
import t from 'tap';
import { commandOutcome } from '../../../../src/actors/runner-supervisor/supervisor/command-outcome.js';

t.test('command outcomes', async (t) => {
  t.same(commandOutcome('complete', { exitCode: 0, signal: null, durationMs: 1234 }, undefined), {
    reason: 'command exited with code 0 after 1.2 s',
    exitCode: 0,
  });
  t.same(commandOutcome('complete', undefined, undefined), { reason: 'command exited with code 0', exitCode: 0 });
  t.same(commandOutcome('failed', undefined, 'python exited with code 2'), {
    reason: 'command failed: python exited with code 2',
    exitCode: 2,
  });
  t.same(commandOutcome('failed', undefined, 'train exited with signal SIGKILL'), {
    reason: 'command failed: train exited with signal SIGKILL',
    signal: 'SIGKILL',
  });
  t.same(commandOutcome('failed', undefined, 'cannot start nope: spawn nope ENOENT'), {
    reason: 'command failed: cannot start nope: spawn nope ENOENT',
  });
  t.same(commandOutcome('cancelled', undefined, 'runner shutting down'), {
    reason: 'command cancelled: runner shutting down',
  });
  t.equal(commandOutcome('running', undefined, undefined), undefined);
  t.ok(commandOutcome('failed', undefined, 'x'.repeat(2000))!.reason.length <= 500, 'bounded');
});
