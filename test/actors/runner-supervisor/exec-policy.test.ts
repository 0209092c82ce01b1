/**
 * On one machine: exec is off unless the node allows it (checked by the runner supervisor at spawn
 * time, whoever proposed the instance), an allow-list admits only its commands, the runner quota holds, runner
 * directories never collide, and runner files are owner-only. Each check fails on the code before exec was off by default.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterEvent } from '../../../src/protocols/events.js';
import { execDecision, parseExecPolicy } from '../../../src/protocols/exec-policy.js';
import { parseNodeArgs } from '../../../src/node/config.js';
import { secureDataDir } from '../../../src/node/data-dir.js';
import { runnerDir } from '../../../src/actors/runner-supervisor/shared/run-dir.js';
import { segmentName } from '../../../src/actors/runner-supervisor/shared/log-segments.js';
import { RunnerManager } from '../../../src/actors/runner-supervisor/supervisor/runner-manager.js';
import type { ManagerEvent } from '../../../src/actors/runner-supervisor/supervisor/runner-manager-options.js';
import { allGone, loopbackInstance, tempDir, waitFor } from './fixtures/helpers.js';
import { supervisorActor } from './fixtures/supervisor-actor.js';

/** Processes of this user whose command line contains `marker` (a refused command must not exist). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) out.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

t.test('the allow-list matches a basename or an absolute path, never a relative path to a listed name', async (t) => {
  t.same(execDecision(true, 'sh'), { allowed: true });
  t.match(execDecision(false, 'sh'), { allowed: false, rule: /no --allow-exec/ });
  t.match(execDecision(undefined, 'python3'), { allowed: false }, 'a node that never said allows nothing');
  const list = parseExecPolicy('python3,/opt/jobs/run.sh');
  t.same(execDecision(list, 'python3'), { allowed: true });
  t.same(execDecision(list, '/usr/bin/python3'), { allowed: true }, 'basename of an absolute path');
  t.same(execDecision(list, '/opt/jobs/run.sh'), { allowed: true });
  t.match(execDecision(list, 'run.sh'), { allowed: false }, 'a path entry matches only that path');
  t.match(execDecision(list, './python3'), { allowed: false }, 'relative paths depend on cwd');
  t.match(execDecision(list, 'sh'), {
    allowed: false,
    rule: '"sh" is not allowed by --allow-exec=python3,/opt/jobs/run.sh',
  });
  t.throws(() => parseExecPolicy('jobs/run.sh'), /must be absolute/);
  t.throws(() => parseExecPolicy(''), /expected/);
});

t.test('--allow-exec flag, list and config file; --max-runners / --max-instances', async (t) => {
  const dir = tempDir(t);
  t.equal(parseNodeArgs([]).config.allowExec, false, 'off by default');
  t.equal(parseNodeArgs(['--allow-exec', '--port', '0']).config.allowExec, true);
  t.same(parseNodeArgs(['--allow-exec=python3,/opt/jobs/run.sh']).config.allowExec, ['python3', '/opt/jobs/run.sh']);
  const file = join(dir, 'c.json');
  writeFileSync(file, JSON.stringify({ allowExec: ['python3'], maxRunners: 2, maxInstances: 5 }));
  t.match(parseNodeArgs(['--config', file]).config, { allowExec: ['python3'], maxRunners: 2, maxInstances: 5 });
  t.match(parseNodeArgs(['--config', file, '--allow-exec']).config, { allowExec: true }, 'the flag wins');
  t.match(parseNodeArgs([]).config, { maxRunners: 8, maxInstances: 64 });
  t.throws(() => parseNodeArgs(['--allow-exec=rel/x']), { code: 'TORUS_CONFIG_INVALID' });
  t.throws(() => parseNodeArgs(['--max-runners', '0']), /--max-runners/);
  writeFileSync(file, JSON.stringify({ allowExec: 'yes please' }));
  t.throws(() => parseNodeArgs(['--config', file]), /allowExec/);
});

const failedOf = (proposals: ClusterEvent[], id: string) =>
  proposals.find(
    (e): e is Extract<ClusterEvent, { type: 'RunnerStatusChanged' }> =>
      e.type === 'RunnerStatusChanged' && e.instanceId === id && e.status === 'Failed',
  );

t.test(
  'a node without --allow-exec refuses at spawn time: Failed with the reason, instance failed, no process',
  async (t) => {
    const { dir, runtime, proposals, create } = await supervisorActor(t, {});
    const marker = `torus-refused-${process.pid}-${Date.now()}`;
    await create('r1', 'sh', ['-c', `echo ${marker} > ${dir}/ran; exec sleep 60 # ${marker}`]);
    await waitFor(() => proposals.some((e) => e.type === 'InstanceFailed'), 20_000, 'InstanceFailed');
    const failed = failedOf(proposals, 'r1');
    t.ok(failed, 'the runner is reported Failed');
    t.match(
      failed?.reason,
      /^node a refuses to run "sh": exec is off \(no --allow-exec\)/,
      'the reason names the node and the rule',
    );
    t.match(
      proposals.find((e) => e.type === 'InstanceFailed'),
      { instanceId: 'r1', reason: /node a refuses/ },
    );
    t.notOk(
      proposals.some((e) => e.type === 'RunnerStatusChanged' && e.status !== 'Failed'),
      'no other status: nothing started',
    );
    const runners = await runtime.request<{ pid: number | undefined }[]>('runner-supervisor', { type: 'runners' });
    t.ok(
      runners.every((r) => r.pid === undefined),
      'no runner process (the failed instance is stopped: none listed)',
    );
    await new Promise((r) => setTimeout(r, 500));
    t.same(processesWith(marker), [], 'no process with the marker command');
    t.notOk(existsSync(join(dir, 'ran')), 'the command never ran');
  },
);

t.test('--allow-exec=python3: sh is refused, python3 runs', async (t) => {
  const { dir, runtime, proposals, create } = await supervisorActor(t, { allowExec: ['python3'] });
  await create('sh-job', 'sh', ['-c', `touch ${dir}/sh-ran`]);
  await create('py-job', '/usr/bin/python3', [
    '-c',
    `open(${JSON.stringify(join(dir, 'py-ran'))}, 'w').write('ok'); import time; time.sleep(60)`,
  ]);
  await waitFor(() => existsSync(join(dir, 'py-ran')), 60_000, 'python3 ran');
  t.match(failedOf(proposals, 'sh-job')?.reason, /"sh" is not allowed by --allow-exec=python3/);
  t.notOk(failedOf(proposals, 'py-job'), 'python3 not refused');
  t.notOk(existsSync(join(dir, 'sh-ran')), 'sh never ran');
  const runners = await runtime.request<{ instanceId: string; pid: number | undefined }[]>('runner-supervisor', {
    type: 'runners',
  });
  t.ok(runners.find((r) => r.instanceId === 'py-job')?.pid, 'the python3 runner has a process');
});

t.test('the runner quota: one more runner than --max-runners is refused naming the quota (logged once)', async (t) => {
  const dir = tempDir(t);
  const events: ManagerEvent[] = [];
  const limits: string[] = [];
  const m = new RunnerManager({
    nodeId: 'a',
    dataDir: dir,
    allowExec: true,
    maxRunners: 1,
    onEvent: (e) => events.push(e),
    onLimit: (msg) => limits.push(msg),
  });
  t.teardown(() => m.shutdown());
  m.instanceCreated(await loopbackInstance('q1', ['a'], { kind: 'exec', command: ['sleep', '60'] }));
  m.instanceCreated(await loopbackInstance('q2', ['a'], { kind: 'exec', command: ['sleep', '60'] }));
  m.instanceCreated(await loopbackInstance('q3', ['a'], { kind: 'exec', command: ['sleep', '60'] }));
  const refused = events.filter((e) => e.type === 'InstanceFailed');
  t.same(
    refused.map((e) => e.type === 'InstanceFailed' && e.instanceId),
    ['q2', 'q3'],
  );
  t.match(refused[0], { reason: 'node a is at its runner quota: 1 of 1 runners (--max-runners=1)' });
  t.equal(limits.length, 1, 'being at the limit is logged once');
  t.same(
    m
      .runners()
      .filter((r) => r.pid !== undefined)
      .map((r) => r.instanceId),
    ['q1'],
  );
  await m.instanceDeleted('q1');
  m.instanceCreated(await loopbackInstance('q4', ['a'], { kind: 'exec', command: ['sleep', '60'] }));
  t.ok(m.runners().find((r) => r.instanceId === 'q4')?.pid, 'below the quota again: the next runner starts');
  const pids = [...m.pids];
  await m.shutdown();
  t.same(await allGone(pids), []);
});

t.test('runner directories: distinct instance ids never share one; logs 0600, directories 0700', async (t) => {
  const dir = tempDir(t);
  t.not(runnerDir(dir, 'a:b', 'n'), runnerDir(dir, 'a_b', 'n'), 'a:b and a_b (one dir before the injective escaping)');
  t.not(runnerDir(dir, 'a@b', 'c'), runnerDir(dir, 'a', 'b@c'), '@ in ids cannot shift the split');
  t.not(runnerDir(dir, 'x%3A', 'n'), runnerDir(dir, 'x:', 'n'), 'the escape character is escaped too');
  const long = runnerDir(dir, 'i'.repeat(250), 'n'.repeat(250));
  t.ok(long.split('/').pop()!.length <= 200, 'long ids stay under the file-name limit');
  t.not(long, runnerDir(dir, 'i'.repeat(250), `${'n'.repeat(249)}m`), 'and stay distinct');

  const events: ManagerEvent[] = [];
  const m = new RunnerManager({ nodeId: 'n', dataDir: dir, allowExec: true, onEvent: (e) => events.push(e) });
  t.teardown(() => m.shutdown());
  for (const id of ['a:b', 'a_b'])
    m.instanceCreated(
      await loopbackInstance(id, ['n'], { kind: 'exec', command: ['sh', '-c', `echo from-${id}; exec sleep 60`] }),
    );
  const logOf = (id: string): string => join(runnerDir(dir, id, 'n'), segmentName('stdout', 0));
  await waitFor(
    () => ['a:b', 'a_b'].every((id) => existsSync(logOf(id)) && readFileSync(logOf(id), 'utf8').includes('from-')),
    60_000,
    'both logs written',
  );
  t.equal(readFileSync(logOf('a:b'), 'utf8').trim(), 'from-a:b', 'each log holds only its own runner');
  t.equal(readFileSync(logOf('a_b'), 'utf8').trim(), 'from-a_b');
  for (const id of ['a:b', 'a_b']) {
    const d = runnerDir(dir, id, 'n');
    t.equal(statSync(d).mode & 0o777, 0o700, `${id}: runner dir 0700`);
    for (const f of [segmentName('stdout', 0), 'hostfile.json'])
      t.equal(statSync(join(d, f)).mode & 0o777, 0o600, `${id}: ${f} 0600`);
  }
  t.equal(statSync(join(dir, 'runners')).mode & 0o777, 0o700, 'runners/ 0700');
});

t.test(
  'the data dir is made 0700 (created, or an own dir others could enter); a shared sticky dir is left with a warning',
  async (t) => {
    const dir = tempDir(t);
    const fresh = join(dir, 'fresh', 'data');
    const warnings: string[] = [];
    secureDataDir(fresh, (m) => warnings.push(m));
    t.equal(statSync(fresh).mode & 0o777, 0o700);
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    secureDataDir(open, (m) => warnings.push(m));
    t.equal(statSync(open).mode & 0o777, 0o700, 'tightened');
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    secureDataDir(shared, (m) => warnings.push(m));
    t.equal(statSync(shared).mode & 0o7777, 0o1777, 'a sticky shared dir is not changed');
    t.equal(warnings.length, 1, 'but warned about');
  },
);
