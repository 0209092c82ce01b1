/**
 * Re-dialling a peer that refused us: the backoff as a pure function (src/actors/cluster/transport/redial.ts), then real
 * ClusterNodes on loopback with different secrets: the re-dial interval grows, the `peers` list shows the reason,
 * the attempts and the next retry; a restart of the refusing peer (its dial to us, new incarnation) resets it.
 */
import t from 'tap';
import { ClusterNode } from '../../../src/actors/cluster/cluster-node.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import type { ClusterState } from '../../../src/actors/topology-keeper/state.js';
import {
  DEFAULT_REDIAL,
  NO_REFUSALS,
  refused,
  refusedDelayMs,
  shouldReset,
  type Refusals,
} from '../../../src/actors/cluster/transport/redial.js';
import { ConnectionManager, type HeardPeer } from '../../../src/actors/cluster/transport/connections.js';
import { clusterNameHash } from '../../../src/actors/cluster/transport/auth.js';
import { createLogger } from '../../../src/runtime/log.js';

t.test('refusedDelayMs: 10 s doubling, capped at 5 min', async (t) => {
  t.same(
    [1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => refusedDelayMs(n) / 1000),
    [10, 20, 40, 80, 160, 300, 300, 300, 300],
  );
  t.equal(refusedDelayMs(0), 0, 'never refused: no wait');
  t.equal(refusedDelayMs(3, { baseMs: 100, capMs: 250 }), 250);
  t.equal(DEFAULT_REDIAL.capMs, 300_000);
});

t.test('refused / shouldReset: transcript of one peer', async (t) => {
  const lines: string[] = [];
  let r: Refusals = NO_REFUSALS;
  let now = 0;
  const refuse = (inc: number | undefined) => {
    const out = refused(r, now, inc);
    r = out.refusals;
    lines.push(`${now / 1000}s refused by inc ${inc ?? '?'} -> #${r.count}, next at ${out.nextAt / 1000}s`);
    now = out.nextAt;
  };
  refuse(1);
  refuse(1);
  refuse(1);
  lines.push(`advert inc 1: reset=${shouldReset(r, 1)}`);
  lines.push(`advert inc 2: reset=${shouldReset(r, 2)}`);
  refuse(2); // it restarted but still refuses (we never saw the advert): counts from 1 again
  refuse(undefined); // no hello this time: keeps the known incarnation
  t.same(lines, [
    '0s refused by inc 1 -> #1, next at 10s',
    '10s refused by inc 1 -> #2, next at 30s',
    '30s refused by inc 1 -> #3, next at 70s',
    'advert inc 1: reset=false',
    'advert inc 2: reset=true',
    '70s refused by inc 2 -> #1, next at 80s',
    '80s refused by inc ? -> #2, next at 100s',
  ]);
  t.equal(r.incarnation, 2);
  t.notOk(shouldReset(NO_REFUSALS, 5), 'a peer that never refused us needs no reset');
  t.notOk(shouldReset({ count: 2 }, 5), 'unknown refusing incarnation: no reset (cannot tell it restarted)');
});

const timings = {
  heartbeatMs: 100,
  failureTimeoutMs: 800,
  settleMs: 300,
  electionStaggerMs: 100,
  candidateTimeoutMs: 500,
  gapRetryMs: 200,
};

function node(
  t: { teardown(fn: () => unknown): void },
  id: string,
  secret: string,
  peers: string[],
  extra: { port?: number; incarnation?: number; redial?: { baseMs: number; capMs: number } } = {},
) {
  const n = new ClusterNode<ClusterState>({
    nodeId: id,
    incarnation: extra.incarnation ?? 1,
    clusterName: 'test',
    replica: topologyReplica,
    peers,
    host: '127.0.0.1',
    mdns: false,
    addresses: ['127.0.0.1'],
    timings,
    tickMs: 20,
    secret,
    ...(extra.port !== undefined ? { port: extra.port } : {}),
    ...(extra.redial ? { redial: extra.redial } : {}),
  });
  t.teardown(() => n.stop());
  return n;
}

/** Samples a's heard entry for `address` until `count` distinct refusals were seen (or `ms` passed). */
async function refusals(
  a: ClusterNode<ClusterState>,
  address: string,
  count: number,
  ms: number,
): Promise<HeardPeer[]> {
  const seen: HeardPeer[] = [];
  const end = Date.now() + ms;
  while (seen.length < count && Date.now() < end) {
    const h = a.heard().find((x) => x.address === address);
    if (h && h.attempts !== undefined && h.attempts !== seen.at(-1)?.attempts) seen.push(h);
    await new Promise((r) => setTimeout(r, 5));
  }
  return seen;
}

t.test(
  'a peer with another secret: the re-dial interval doubles up to the cap, listed with reason and next retry',
  async (t) => {
    const b = node(t, 'b', 'secret-b', []);
    const pb = await b.start();
    const redial = { baseMs: 100, capMs: 800 };
    const a = node(t, 'a', 'secret-a', [`127.0.0.1:${pb}`], { redial });
    await a.start();
    const seen = await refusals(a, `127.0.0.1:${pb}`, 6, 15_000);
    t.equal(seen.length, 6, `6 refusals seen: ${JSON.stringify(seen.map((h) => h.attempts))}`);
    t.same(
      seen.map((h) => h.attempts),
      [1, 2, 3, 4, 5, 6],
      'one dial at a time, each refused',
    );
    for (const h of seen) {
      t.equal(h.reason, 'auth-failure', 'listed with the reason');
      const wait = h.nextRetryAt! - h.at;
      t.ok(
        Math.abs(wait - refusedDelayMs(h.attempts!, redial)) <= 50,
        `after refusal #${h.attempts} the next dial is planned ${wait} ms later (${refusedDelayMs(h.attempts!, redial)})`,
      );
    }
    // The dial after refusal k happens no earlier than planned: the gaps grow 100, 200, 400, 800, 800.
    const gaps = seen.slice(1).map((h, i) => h.at - seen[i]!.at);
    gaps.forEach((g, i) =>
      t.ok(g >= refusedDelayMs(i + 1, redial) - 5, `gap ${i + 1}: ${g} ms >= ${refusedDelayMs(i + 1, redial)} ms`),
    );
    // Growth is judged on the planned waits: the measured gaps also carry each handshake's time, which on a loaded
    // machine is a few hundred ms and would swamp the 100 ms first step.
    const waits = seen.map((h) => h.nextRetryAt! - h.at);
    t.ok(
      waits[3]! >= waits[0]! * 4 && Math.abs(waits[4]! - waits[3]!) <= 50,
      `the interval doubled up to the cap (${waits.join(', ')} ms planned; gaps ${gaps.join(', ')} ms)`,
    );
    t.same(a.members(), [], 'never joined');
  },
);

t.test('the refusing peer restarts (new incarnation) and dials us: the backoff resets at once', async (t) => {
  const b1 = node(t, 'b', 'secret-b', []);
  const pb = await b1.start();
  const redial = { baseMs: 200, capMs: 20_000 };
  const a = node(t, 'a', 'secret-a', [`127.0.0.1:${pb}`], { redial });
  const pa = await a.start();
  const address = `127.0.0.1:${pb}`;
  const seen = await refusals(a, address, 4, 15_000);
  t.equal(seen.at(-1)?.attempts, 4, '4 refusals: the next dial is 1.6 s away');
  const planned = seen.at(-1)!.nextRetryAt!;
  await b1.stop();
  // b comes back as a new process, on the same port, and dials a itself (still the wrong secret).
  const b2 = node(t, 'b', 'secret-b', [`127.0.0.1:${pa}`], { port: pb, incarnation: 2 });
  await b2.start();
  const restartedAt = Date.now();
  const after = await refusals(a, address, 1, 5000).then(async (first) => {
    // the first sample may still be the old entry; wait for attempts to restart from 1
    const end = Date.now() + 5000;
    while (Date.now() < end) {
      const h = a.heard().find((x) => x.address === address);
      if (h && h.attempts === 1 && h.at >= restartedAt) return h;
      await new Promise((r) => setTimeout(r, 5));
    }
    return first[0];
  });
  t.equal(after?.attempts, 1, 'counting from 1 again');
  t.ok(
    after && after.at < planned,
    `re-dialled ${after ? after.at - restartedAt : '?'} ms after its restart, before the planned retry (${planned - restartedAt} ms)`,
  );
});

t.test(
  'mDNS: the same advert again changes nothing; an advert with a new incarnation resets the backoff',
  async (t) => {
    const b = node(t, 'b', 'secret-b', []);
    const pb = await b.start();
    const a = new ConnectionManager({
      local: {
        nodeId: 'a',
        cluster: clusterNameHash('test'),
        incarnation: 1,
        startedAt: 0,
        apiPort: 0,
        name: 'a',
        version: 'test',
        addresses: ['127.0.0.1'],
      },
      secret: 'secret-a',
      host: '127.0.0.1',
      port: 0,
      log: createLogger({ component: 'test' }),
      now: Date.now,
      redial: { baseMs: 300, capMs: 30_000 },
      onJoined: () => undefined,
      onLeft: () => undefined,
      onFrame: () => undefined,
    });
    t.teardown(() => a.stop());
    await a.listen();
    const timer = setInterval(() => a.tick(), 20);
    t.teardown(() => clearInterval(timer));
    const address = `127.0.0.1:${pb}`;
    const entry = () => a.heard().find((x) => x.address === address);
    a.addTarget('127.0.0.1', pb, 'mdns', 'b', 1);
    const end = Date.now() + 10_000;
    while ((entry()?.attempts ?? 0) < 3 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    t.equal(entry()?.attempts, 3, 'refused 3 times: next dial 1.2 s away');
    const planned = entry()!.nextRetryAt!;
    a.addTarget('127.0.0.1', pb, 'mdns', 'b', 1); // the same process announcing again
    await new Promise((r) => setTimeout(r, 300));
    t.equal(entry()?.attempts, 3, 'the same incarnation announced again: still waiting');
    t.equal(entry()?.nextRetryAt, planned);
    // (b's own incarnation does not matter here: a only compares what the adverts and hellos say)
    a.addTarget('127.0.0.1', pb, 'mdns', 'b', 2);
    t.equal(entry()?.attempts, 0, 'a new incarnation: the listed entry says it will be dialed now');
    const t0 = Date.now();
    while ((entry()?.attempts ?? 0) < 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    t.equal(
      entry()?.attempts,
      1,
      `dialed again ${Date.now() - t0} ms after the advert, before the planned ${planned - t0} ms`,
    );
    t.ok(Date.now() < planned, 'before the planned retry');
  },
);
