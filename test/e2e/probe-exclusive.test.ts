/**
 * Regression test for a bug found end to end (test/e2e/cluster-profile.test.ts): when a cluster forms, every
 * node measures its links at once, the transfers share sinks, links and CPUs, and a 5 Gbit/s thunderbolt link
 * was measured slower than the 1 Gbit/s LAN beside it. Throughput probes are now exclusive per node, like an
 * iperf3 server (src/protocols/probe.ts): a sink that is receiving, or whose own profiler is sending, answers
 * 503 TORUS_PROBE_BUSY; measureCapacity backs off and retries, and forces after its budget.
 * Loopback only (no lab needed).
 */
import t, { type Test } from 'tap';
import { createApiServer } from '../../src/api/server.js';
import type { NodeFacade } from '../../src/api/node-facade.js';
import { BroadcastChannel } from 'node:worker_threads';
import { createProbeHandler } from '../../src/actors/network-profiler/probes/probe-handler.js';
import { ProbeGate } from '../../src/actors/network-profiler/probes/probe-gate.js';
import { measureCapacity, measureThroughput } from '../../src/actors/network-profiler/probes/measure.js';
import { probeBusyChannelName } from '../../src/protocols/probe.js';
import { TorusError } from '../../src/protocols/errors.js';

/** The node's own HTTP server (src/api/server.ts) with the probe handler, as a real node mounts it. */
async function probeServer(t: Test, nodeId: string): Promise<number> {
  return (await probeServerWithGate(t, nodeId)).port;
}

async function probeServerWithGate(t: Test, nodeId: string): Promise<{ port: number; gate: ProbeGate }> {
  const gate = new ProbeGate(nodeId);
  const probeHandler = createProbeHandler(() => ({ nodeId, clusterName: 'c', incarnation: 1 }), {
    dataKey: null,
    gate,
  });
  const api = await createApiServer({} as NodeFacade, {
    port: 0,
    host: '127.0.0.1',
    probeHandler,
    auth: { mode: 'token', token: 'tt_probe-test-token-0123456789' },
  });
  t.teardown(() => api.close());
  return { port: api.port, gate };
}

/** Waits (bounded) until the gate reaches the state asked for: the event the test needs, not a guessed sleep. */
async function until(what: string, holds: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!holds()) {
    if (Date.now() > end) throw new Error(`not ${what} within ${ms} ms`);
    await new Promise((r) => setImmediate(r));
  }
}

t.test('a sink takes one throughput probe at a time', async (t) => {
  const { port, gate } = await probeServerWithGate(t, 'node-sink-1');
  const first = measureThroughput('127.0.0.1', port, { durationMs: 400 });
  await until('busy with the first probe', () => gate.busy());
  const second = await measureThroughput('127.0.0.1', port, { durationMs: 100 }).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(
    second instanceof TorusError && second.code === 'TORUS_PROBE_BUSY',
    `a concurrent probe is refused as busy (${String(second)})`,
  );
  const forced = await measureThroughput('127.0.0.1', port, { durationMs: 100, force: true });
  t.ok(forced.bytes > 0, 'with the force header it is measured anyway');
  t.ok((await first).bps > 0, 'the first probe completes normally');
  t.ok((await measureThroughput('127.0.0.1', port, { durationMs: 100 })).bps > 0, 'once idle, the sink accepts again');
});

t.test('measureCapacity waits for a busy sink instead of measuring alongside', async (t) => {
  const port = await probeServer(t, 'node-sink-2');
  const t0 = Date.now();
  const [a, b] = await Promise.all([
    measureCapacity('127.0.0.1', port, { durationMs: 300, repeats: 1 }),
    measureCapacity('127.0.0.1', port, { durationMs: 300, repeats: 1 }),
  ]);
  const elapsed = Date.now() - t0;
  t.ok(a.bps > 0 && b.bps > 0, 'both measured');
  // Serial transfers take at least the sum of their own spans; overlapping ones about the longer one. Each span is
  // the transfer's own (on loopback the 1 GiB byte bound, not the 300 ms time bound, can end it first).
  const spans = Math.floor((a.seconds + b.seconds) * 1000);
  t.ok(
    elapsed >= spans,
    `they ran one after the other (${elapsed} ms for two transfers of ${Math.round(a.seconds * 1000)} and ${Math.round(b.seconds * 1000)} ms)`,
  );
});

t.test(
  "the node's own profiler sending makes its sink busy (announced over an in-process channel), with an expiry",
  async (t) => {
    const { port, gate } = await probeServerWithGate(t, 'node-self');
    const channel = new BroadcastChannel(probeBusyChannelName('node-self'));
    t.teardown(() => channel.close());
    channel.postMessage({ until: Date.now() + 600 });
    await until('told of the own send', () => gate.busy());
    const refused = await measureThroughput('127.0.0.1', port, { durationMs: 50 }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(refused instanceof TorusError && refused.code === 'TORUS_PROBE_BUSY', 'busy while this node sends');
    const waited = Date.now();
    const r = await measureCapacity('127.0.0.1', port, { durationMs: 50, repeats: 1 });
    t.ok(
      r.bps > 0 && Date.now() - waited >= 300,
      `measured once the announcement expired (${Date.now() - waited} ms later)`,
    );
    channel.postMessage({ until: Date.now() + 60_000 });
    await until('told of the next send', () => gate.busy());
    channel.postMessage({ until: 0 });
    await until('told the send ended', () => !gate.busy());
    // Accepted (not refused as busy) is the point; a 50 ms transfer on a loaded machine may have no steady window for bps.
    t.ok(
      (await measureThroughput('127.0.0.1', port, { durationMs: 50 })).bytes > 0,
      'an end-of-transfer announcement frees it at once',
    );
    const other = await probeServer(t, 'node-other');
    t.ok(
      (await measureThroughput('127.0.0.1', other, { durationMs: 50 })).bytes > 0,
      "another node's sink is not affected",
    );
  },
);

t.test('after the busy budget, measureCapacity forces', async (t) => {
  const { port, gate } = await probeServerWithGate(t, 'node-stuck');
  const channel = new BroadcastChannel(probeBusyChannelName('node-stuck'));
  t.teardown(() => channel.close());
  channel.postMessage({ until: Date.now() + 60_000 });
  await until('told of the own send', () => gate.busy());
  const t0 = Date.now();
  const r = await measureCapacity('127.0.0.1', port, { durationMs: 50, repeats: 1, busyBudgetMs: 500 });
  t.ok(r.bps > 0, `measured with force after ${Date.now() - t0} ms`);
  t.ok(Date.now() - t0 < 3000, 'within the budget plus one back-off');
  const ac = new AbortController();
  const p = measureCapacity('127.0.0.1', port, { durationMs: 50, repeats: 1, signal: ac.signal });
  setTimeout(() => ac.abort(), 200);
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  t.ok(e instanceof TorusError && e.code === 'TORUS_CANCELLED', 'an abort ends the wait');
});

t.test('under contention every probe is either measured or refused as busy (never a broken pipe)', async (t) => {
  const port = await probeServer(t, 'node-contended');
  const outcomes: Record<string, number> = {};
  for (let round = 0; round < 8; round++) {
    const rs = await Promise.allSettled(
      [0, 1, 2].map((i) =>
        new Promise((r) => setTimeout(r, i * 40)).then(() => measureThroughput('127.0.0.1', port, { durationMs: 200 })),
      ),
    );
    for (const r of rs) {
      const k = r.status === 'fulfilled' ? 'measured' : String((r.reason as { code?: string }).code ?? r.reason);
      outcomes[k] = (outcomes[k] ?? 0) + 1;
    }
  }
  t.same(Object.keys(outcomes).sort(), ['TORUS_PROBE_BUSY', 'measured'], `outcomes: ${JSON.stringify(outcomes)}`);
  const plain = await fetch(`http://127.0.0.1:${port}/node_id`, { method: 'GET' });
  t.equal(await plain.json(), 'node-contended', 'other routes unaffected');
});
