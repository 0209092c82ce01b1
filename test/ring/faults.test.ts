/** Failure behaviour: a killed, stopped or closed peer fails the collective naming it, within the timeout, without leaking sockets. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { TorusError } from '../../src/protocols/errors.js';
import { childExecArgv } from '../../src/runtime/module-url.js';
import { RingCommunicator } from '../../src/ring/index.js';
import { freePorts, loopbackHosts, loopbackRing } from './fixtures/helpers.js';
import { tcpHandles, tcpHandlesSettled } from './fixtures/reference.js';

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit').then(() => undefined);
t.setTimeout(600_000); // child ranks start under the TS loader: slow on a busy 2-vCPU machine
const COUNT = 1 << 22; // 16 MiB of float32: one all-reduce takes far longer than the kill delay

function startChild(
  rank: number,
  ports: number[],
): { child: ChildProcess; lines: string[]; waitFor: (prefix: string) => Promise<void> } {
  const child = spawn(
    process.execPath,
    [
      ...childExecArgv(import.meta.url),
      new URL('./fixtures/rank-child.ts', import.meta.url).pathname,
      String(rank),
      JSON.stringify(ports),
      String(COUNT),
      '60000',
      'both',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: () => void }[] = [];
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters.filter((x) => line.startsWith(x.prefix))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const waitFor = (prefix: string) =>
    lines.some((l) => l.startsWith(prefix))
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ prefix, resolve }));
  return { child, lines, waitFor };
}

/** Runs all-reduces on the in-process ranks until they fail; resolves with each rank's error and when it came. */
async function runUntilFailure(comms: RingCommunicator[]): Promise<{ error: TorusError; at: number }[]> {
  const buf = comms.map(() => new Float32Array(COUNT).fill(1));
  return Promise.all(
    comms.map(async (comm, i) => {
      for (;;) {
        try {
          await comm.allReduce(buf[i] as Float32Array, 'max');
        } catch (error) {
          return { error: error as TorusError, at: performance.now() };
        }
      }
    }),
  );
}

async function childRing(t: Test, timeoutMs: number, n = 3) {
  const before = tcpHandles();
  const ports = await freePorts(n);
  const remote = startChild(2, ports);
  t.teardown(() => {
    remote.child.kill('SIGKILL');
  });
  // The child starts under the TS loader, which can take tens of seconds on a busy machine: be patient,
  // and settle every in-process connect (a rejected Promise.all would leave the others' sockets open).
  const settled = await Promise.allSettled(
    [0, 1, 3, 4]
      .filter((rank) => rank < n)
      .map((rank) =>
        RingCommunicator.connect({
          rank,
          hosts: loopbackHosts(ports, rank),
          timeoutMs,
          connectTimeoutMs: 120_000,
          bidirectional: true,
        }),
      ),
  );
  const comms = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  await remote.waitFor('ready');
  return { before, remote, comms };
}

t.test(
  'a peer killed with SIGKILL mid-collective fails both neighbours with TORUS_RING_PEER_LOST naming it',
  async (t) => {
    const timeoutMs = 5000;
    const { before, remote, comms } = await childRing(t, timeoutMs);
    const failures = runUntilFailure(comms);
    await remote.waitFor('op 0'); // the ring works, then we kill rank 2 during the next all-reduce
    await new Promise((resolve) => setTimeout(resolve, 30));
    const killedAt = performance.now();
    remote.child.kill('SIGKILL');
    const results = await failures;
    for (const [rank, { error, at }] of results.entries()) {
      t.ok(error instanceof TorusError, `rank ${rank} got a TorusError`);
      t.equal(error.code, 'TORUS_RING_PEER_LOST', `rank ${rank}: ${error.message}`);
      t.match(error.message, /rank 2 \(127\.0\.0\.3:\d+\)/, `rank ${rank} names the dead peer`);
      t.ok(at - killedAt < timeoutMs, `rank ${rank} failed ${Math.round(at - killedAt)} ms after the kill`);
    }
    await t.rejects(
      comms[0]!.allReduce(new Float32Array(4)),
      { code: 'TORUS_RING_PEER_LOST' },
      'later calls fail at once with the same error',
    );
    await Promise.all(comms.map((c) => c.close()));
    await exited(remote.child);
    t.equal(await tcpHandlesSettled(before), before, 'no sockets leaked');
  },
);

t.test('in a ring of 4 the rank that is not a neighbour of the dead one also names it (abort frames)', async (t) => {
  const { before, remote, comms } = await childRing(t, 5000, 4);
  const failures = runUntilFailure(comms);
  await remote.waitFor('op 0');
  remote.child.kill('SIGKILL');
  const results = await failures;
  for (const { error } of results)
    t.match(
      error.message,
      /rank 2 \(127\.0\.0\.3:\d+\)/,
      `rank ${comms[results.findIndex((r) => r.error === error)]?.rank} names rank 2: ${error.message}`,
    );
  t.equal(results[0]?.error.details.peer, 2, 'rank 0 (not a neighbour of 2) gets the culprit in details.peer');
  await Promise.all(comms.map((c) => c.close()));
  await exited(remote.child);
  t.equal(await tcpHandlesSettled(before), before, 'no sockets leaked');
});

t.test('a stopped (silent) peer fails the collective with TORUS_RING_TIMEOUT within the timeout', async (t) => {
  const timeoutMs = 1500;
  const { before, remote, comms } = await childRing(t, timeoutMs);
  const failures = runUntilFailure(comms);
  await remote.waitFor('op 0');
  const stoppedAt = performance.now();
  remote.child.kill('SIGSTOP');
  const results = await failures;
  remote.child.kill('SIGKILL');
  const codes = results.map((r) => r.error.code);
  t.ok(codes.includes('TORUS_RING_TIMEOUT'), `a rank timed out (codes ${codes.join(', ')})`);
  t.ok(
    results.some((r) => r.error.code === 'TORUS_RING_TIMEOUT' && /rank 2 /.test(r.error.message)),
    `the timeout names rank 2: ${results.map((r) => r.error.message).join(' | ')}`,
  );
  for (const [rank, { at }] of results.entries())
    t.ok(
      at - stoppedAt < timeoutMs * 3 + 2000,
      `rank ${rank} failed ${Math.round(at - stoppedAt)} ms after the stop (no hang)`,
    );
  await Promise.all(comms.map((c) => c.close()));
  await exited(remote.child);
  t.equal(await tcpHandlesSettled(before), before, 'no sockets leaked');
});

t.test('a rank accused of silence while it waits on a silent peer names that peer, not itself', async (t) => {
  // Rank 0 waits on rank 1, which waits on rank 2, which never sends: rank 0 (the shortest timeout) times out
  // first and can only blame rank 1; rank 1 is told, and names rank 2 long before its own timeout.
  const before = tcpHandles();
  const ports = await freePorts(3);
  const comms = await Promise.all(
    [300, 30_000, 30_000].map((timeoutMs, rank) =>
      RingCommunicator.connect({
        rank,
        hosts: loopbackHosts(ports, rank),
        timeoutMs,
        connectTimeoutMs: 5000,
        bidirectional: true,
      }),
    ),
  );
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const failure = (op: Promise<unknown>) =>
    op.then(
      () => null,
      (error: TorusError) => ({ error, at: performance.now() }),
    );
  const started = performance.now();
  const rank0 = failure(comms[0]!.recv(new Float32Array(1024), 1));
  const rank1 = failure(comms[1]!.recv(new Float32Array(1024), 2));
  const first = await rank0;
  t.equal(first?.error.code, 'TORUS_RING_TIMEOUT', `rank 0 times out: ${first?.error.message}`);
  t.match(first?.error.message, /no data from rank 1 /, 'rank 0 can only see rank 1');
  const deadline = new Promise<'none'>((resolve) => setTimeout(() => resolve('none'), 10_000).unref());
  const second = await Promise.race([rank1, deadline]);
  t.not(second, 'none', 'rank 1 fails within 10 s, not at its own 30 s timeout');
  if (second && second !== 'none') {
    t.equal(second.error.code, 'TORUS_RING_TIMEOUT', `rank 1: ${second.error.message}`);
    t.equal(second.error.details.peer, 2, 'rank 1 names rank 2 in details.peer');
    t.match(second.error.message, /no data from rank 2 .*rank 0 timed out waiting on this rank/);
    t.ok(second.at - started < 10_000, `rank 1 failed ${Math.round(second.at - started)} ms after the start`);
  }
  await Promise.all(comms.map((c) => c.close()));
  t.equal(await tcpHandlesSettled(before), before, 'no sockets leaked');
});

t.test(
  'a rank closing mid-collective fails its neighbours naming it; the closer gets TORUS_CHANNEL_CLOSED',
  async (t) => {
    const before = tcpHandles();
    const comms = await loopbackRing(3, { timeoutMs: 5000 });
    t.teardown(() => Promise.all(comms.map((c) => c.close())));
    const bufs = comms.map(() => new Float32Array(COUNT).fill(2));
    const ops = comms.map((c, r) =>
      c.allReduce(bufs[r] as Float32Array).then(
        () => null,
        (error: TorusError) => error,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    await comms[1]!.close();
    const errors = await Promise.all(ops);
    t.equal(errors[1]?.code, 'TORUS_CHANNEL_CLOSED');
    for (const rank of [0, 2]) {
      t.equal(errors[rank]?.code, 'TORUS_RING_PEER_LOST', `rank ${rank}: ${errors[rank]?.message}`);
      t.match(errors[rank]?.message ?? '', /rank 1 /);
    }
    await Promise.all(comms.map((c) => c.close()));
    t.equal(await tcpHandlesSettled(before), before, 'no sockets leaked');
  },
);

t.test(
  'a rank that leaves between collectives breaks its neighbours quietly; the next collective fails everywhere naming it',
  async (t) => {
    const before = tcpHandles();
    const comms = await loopbackRing(4, { timeoutMs: 5000 });
    t.teardown(() => Promise.all(comms.map((c) => c.close())));
    await Promise.all(comms.map((c) => c.barrier()));
    // Rank 1 is done (as a benchmark rank is after its last barrier) and leaves while the others are idle.
    await comms[1]!.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.match(comms[0]!.error, { code: 'TORUS_RING_PEER_LOST', details: { peer: 1 } }, 'neighbour 0 knows');
    t.match(comms[2]!.error, { code: 'TORUS_RING_PEER_LOST', details: { peer: 1 } }, 'neighbour 2 knows');
    t.equal(comms[3]!.error, null, 'rank 3 was not aborted: ranks still finishing the last collective must not be');
    const started = performance.now();
    const errors = await Promise.all(
      [0, 2, 3].map((r) =>
        comms[r]!.allReduce(new Float32Array(1000).fill(1)).then(
          () => null,
          (error: TorusError) => error,
        ),
      ),
    );
    for (const [i, error] of errors.entries()) {
      t.equal(error?.code, 'TORUS_RING_PEER_LOST', `rank ${[0, 2, 3][i]}: ${error?.message}`);
      t.match(error?.message ?? '', /rank 1 \(127\.0\.0\.2:\d+\)/);
    }
    t.ok(performance.now() - started < 4000, 'rank 3 learns it from the abort frames, not from its 5 s timeout');
    await Promise.all(comms.map((c) => c.close()));
    t.equal(await tcpHandlesSettled(before), before, 'no sockets leaked');
  },
);

t.test('a neighbour that never comes up fails set-up with TORUS_RING_TIMEOUT naming it', async (t) => {
  const before = tcpHandles();
  const ports = await freePorts(3);
  const started = performance.now();
  await t.rejects(RingCommunicator.connect({ rank: 0, hosts: loopbackHosts(ports, 0), connectTimeoutMs: 800 }), {
    code: 'TORUS_RING_TIMEOUT',
    message: /rank [12] \(127\.0\.0\.[23]:\d+\)/,
  });
  t.ok(performance.now() - started < 3000, 'bounded retries');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(await tcpHandlesSettled(before), before, 'no sockets or listeners leaked');
});

t.test('mismatched collectives fail instead of hanging or corrupting data', async (t) => {
  const comms = await loopbackRing(2, { timeoutMs: 2000 });
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const results = await Promise.allSettled([
    comms[0]!.allReduce(new Float32Array(100)),
    comms[1]!.allReduce(new Float32Array(200)),
  ]);
  t.ok(
    results.every((r) => r.status === 'rejected'),
    'both ranks fail',
  );
  const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as TorusError).code : 'ok'));
  t.ok(codes.includes('TORUS_PROTOCOL_INVALID'), `a rank reports the mismatch (${codes.join(', ')})`);
});
