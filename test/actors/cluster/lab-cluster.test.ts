/** Real multi-process clusters in lab network namespaces (root only; skipped otherwise, and failed where lab tests must run: test/fixtures/skip-or-fail.ts). */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab, withLab } from '../../../src/lab/index.js';
import { LabCluster } from './fixtures/lab-cluster.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const noLab = skipOrFail(Lab.unavailableReason());

const timings = { failureTimeoutMs: 3000 };
const plan = (a: string, b: string) => ({
  id: 'inst-1',
  backend: 'ring',
  sharding: 'pipeline',
  nodes: [a, b],
  shards: [
    { node: a, rank: 0, worldSize: 2, startLayer: 0, endLayer: 6 },
    { node: b, rank: 1, worldSize: 2, startLayer: 6, endLayer: 12 },
  ],
  port: 50123,
  hostsByNode: {
    [a]: [
      { ip: '0.0.0.0', port: 50123 },
      { ip: '10.77.0.2', port: 50123 },
    ],
    [b]: [
      { ip: '10.77.0.1', port: 50123 },
      { ip: '0.0.0.0', port: 50123 },
    ],
  },
});
const workload = { kind: 'exec', id: 'job', memoryBytes: 1000, layers: 12, command: '/bin/echo', args: ['hi'] };

// Several multi-process labs on a shared 2-core machine: more than the default per-file timeout.
t.setTimeout(300_000);

t.test(
  '4 hosts in any order converge; leader crash; follower crash and restart',
  { timeout: 150_000, skip: noLab },
  async (t) => {
    await withLab(t, { hosts: 4 }, async (lab) => {
      const dirs = [0, 1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'torus-cl-')));
      t.teardown(() => {
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      });
      const c = new LabCluster(lab);
      for (const h of [2, 0, 3, 1]) {
        c.spawn(h, { nodeId: `h${h}`, dataDir: dirs[h], clusterName: 'lab', timings });
        await new Promise((r) => setTimeout(r, 150));
      }
      const formed = await c.until('4 nodes converge', () => c.converged(4), 30000);
      t.pass(`converged ${formed} ms after the last start`);
      const leader0 = c.leader()!;
      t.ok(
        c.live().every((n) => n.status!.leader === leader0.started!.nodeId),
        `one leader (${leader0.started!.nodeId}) followed by all`,
      );

      // State that must survive: an instance on two followers, and links between followers.
      const followers = c.live().filter((n) => n !== leader0);
      const [f1, f2, f3] = followers.map((n) => n.started!.nodeId) as [string, string, string];
      const victimHost = followers[2]!.host;
      const r = await followers[0]!.propose([
        { type: 'InstanceCreated', instance: plan(f1, f2), workload },
        { type: 'LinkUp', source: f1, sink: f2, ip: lab.hosts[followers[1]!.host]!.lanIp, linkType: 'ethernet' },
        { type: 'LinkUp', source: f2, sink: f3, ip: lab.hosts[victimHost]!.lanIp, linkType: 'ethernet' },
      ]);
      t.ok(r.ok, JSON.stringify(r));
      await c.until('instance and links everywhere', () =>
        c.live().every((n) => n.status!.instances.length === 1 && n.status!.links === 2),
      );

      // kill -9 the leader
      leader0.kill9();
      const killedAt = Date.now();
      await c.until(
        'a new leader and the old one gone',
        () => {
          const l = c.leader();
          return (
            !!l &&
            l !== leader0 &&
            c.live().every((n) => n.status!.nodes.length === 3 && n.status!.leader === l.started!.nodeId)
          );
        },
        15000,
      );
      t.ok(Date.now() - killedAt < 8000, `new leader and NodeGone in ${Date.now() - killedAt} ms`);
      await c.until('digests equal', () => new Set(c.live().map((n) => n.status!.digest)).size === 1);
      t.same(
        c.live().map((n) => n.status!.instances),
        c.live().map(() => ['inst-1:active']),
        'the instance record survived the leader change',
      );
      t.ok(
        c.live().every((n) => n.status!.links === 2),
        'links survived',
      );

      // kill a follower: declared gone within the timeout on every node, its links disappear
      const victim = c.nodes.get(victimHost)!;
      victim.kill9();
      const t0 = Date.now();
      await c.until(
        `${f3} gone everywhere`,
        () => c.live().every((n) => !n.status!.nodes.some((x) => x.startsWith(`${f3}@`))),
        10000,
      );
      const detect = Date.now() - t0;
      t.ok(
        detect <= timings.failureTimeoutMs + 2000,
        `${f3} declared gone in ${detect} ms (timeout ${timings.failureTimeoutMs})`,
      );
      t.ok(
        c.live().every((n) => n.status!.links === 1),
        `${f2}→${f3} link removed`,
      );

      // restart it with the same data dir: same id, next incarnation, catches up
      const again = c.spawn(victimHost, { nodeId: f3, dataDir: dirs[victimHost], clusterName: 'lab', timings });
      await c.until(
        `${f3} rejoined`,
        () => c.converged(3) && c.live().every((n) => n.status!.nodes.includes(`${f3}@2`)),
        20000,
      );
      t.equal(again.started!.nodeId, f3);
      t.equal(again.started!.incarnation, 2);
      t.equal(again.status!.instances.length, 1, 'the restarted node caught up (snapshot + tail)');
      t.same(
        again.status!.instances,
        c.leader()!.status!.instances,
        'same instance record as the leader (marked for re-placement when a member left)',
      );
      t.equal(again.status!.digest, c.leader()!.status!.digest);
    });
  },
);

t.test(
  'two clusters on one bridge stay apart; a wrong secret is refused and listed',
  { timeout: 90_000, skip: noLab },
  async (t) => {
    await withLab(t, { hosts: 5 }, async (lab) => {
      const c = new LabCluster(lab);
      c.spawn(0, { nodeId: 'a0', clusterName: 'alpha', secret: 's' });
      c.spawn(1, { nodeId: 'a1', clusterName: 'alpha', secret: 's' });
      c.spawn(2, { nodeId: 'b0', clusterName: 'beta' });
      c.spawn(3, { nodeId: 'b1', clusterName: 'beta' });
      // The stranger re-dials with a short backoff (0.4 s doubling to 3.2 s) so the growth shows within the test.
      const stranger = c.spawn(4, {
        nodeId: 'a2',
        clusterName: 'alpha',
        secret: 'wrong',
        redial: { baseMs: 400, capMs: 3200 },
      });
      const st = (h: number) => c.nodes.get(h)!.status;
      await c.until('two clusters formed', () =>
        [0, 1, 2, 3].every((h) => st(h)?.nodes.length === 2 && st(h)!.leader !== null),
      );
      await c.until(
        'each lists the other as other-cluster',
        () =>
          [0, 1].every((h) =>
            ['b0', 'b1'].every((id) => st(h)!.heard.some((x) => x.nodeId === id && x.reason === 'other-cluster')),
          ) &&
          [2, 3].every((h) =>
            ['a0', 'a1'].every((id) => st(h)!.heard.some((x) => x.nodeId === id && x.reason === 'other-cluster')),
          ),
      );
      await c.until(
        'wrong secret refused and listed on both sides',
        () =>
          st(0)!.heard.some((x) => x.reason === 'auth-failure') &&
          st(4)!.heard.some((x) => x.reason === 'auth-failure'),
      );
      t.same(st(0)!.nodes.sort(), ['a0@1', 'a1@1'], 'alpha has only its two nodes');
      t.same(st(2)!.nodes.sort(), ['b0@1', 'b1@1'], 'beta has only its two nodes');
      t.same(st(4)!.members, [], 'the stranger joined nobody');
      // mDNS made both sides dial each other; each refused dial is listed with its attempts and next retry.
      await c.until('the refused dials listed with their backoff', () =>
        [st(0)!, st(4)!].every((s) =>
          s.heard.some((x) => x.reason === 'auth-failure' && (x.attempts ?? 0) >= 1 && (x.nextRetryAt ?? 0) > 0),
        ),
      );
      // The stranger's refusals of its dials to a0 over time, from its status lines: the gaps grow.
      const target = `${lab.hosts[0]!.lanIp}:`;
      await c.until(
        'the stranger refused 5 times by a0',
        () => (st(4)!.heard.find((x) => x.address.startsWith(target))?.attempts ?? 0) >= 5,
        30_000,
      );
      const times = new Map<number, number>();
      for (const line of stranger.lines) {
        try {
          const m = JSON.parse(line) as { ev?: string; heard?: { address: string; at?: number; attempts?: number }[] };
          for (const h of m.ev === 'status' ? (m.heard ?? []) : [])
            if (h.address.startsWith(target) && h.attempts && h.at && !times.has(h.attempts))
              times.set(h.attempts, h.at);
        } catch {
          /* not JSON */
        }
      }
      const gaps = [1, 2, 3, 4].map((k) => (times.get(k + 1) ?? NaN) - (times.get(k) ?? NaN));
      t.ok(
        gaps.every((g, k) => g >= 400 * 2 ** k - 50),
        `re-dial gaps grow: ${gaps.join(', ')} ms (planned 400, 800, 1600, 3200)`,
      );
      t.equal(st(0)!.digest, st(1)!.digest);
    });
  },
);

t.test(
  'multicast blocked: static peers (and gossip) still form the cluster',
  { timeout: 90_000, skip: noLab },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      for (const h of [0, 1, 2]) await lab.blockMulticast(h);
      const c = new LabCluster(lab);
      const port = 7400;
      c.spawn(0, { nodeId: 'm0', port });
      // m2 only knows m1, m1 only knows m0: gossip must connect m2 and m0
      c.spawn(1, { nodeId: 'm1', port, peers: [`${lab.hosts[0]!.lanIp}:${port}`] });
      c.spawn(2, { nodeId: 'm2', port, peers: [`${lab.hosts[1]!.lanIp}:${port}`] });
      await c.until('3 nodes converge without multicast', () => c.converged(3), 30000);
      t.pass('formed');
    });
  },
);

const s1Of = (cutHost: number) => `p${[0, 1, 2].find((h) => h !== cutHost)}`;

t.test(
  'partition: the cut-off leader steps down (no quorum) and merges back without losing the newer state',
  { timeout: 120_000, skip: noLab },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = new LabCluster(lab);
      for (const h of [0, 1, 2]) {
        c.spawn(h, { nodeId: `p${h}`, clusterName: 'part', timings });
        await new Promise((r) => setTimeout(r, 200));
      }
      await c.until('formed', () => c.converged(3), 30000);
      const cutHost = c.leader()!.host;
      const cutId = `p${cutHost}`;
      await lab.cut(cutHost, 'lan');
      const side = [0, 1, 2].filter((h) => h !== cutHost).map((h) => c.nodes.get(h)!);
      await c.until(
        'the other side elects a new leader and drops the cut one',
        () =>
          side.every((n) => n.status!.leader !== null && n.status!.leader !== cutId && n.status!.nodes.length === 2),
        15000,
      );
      // The cut node (1 of 3 members, no quorum) steps down and writes nothing: its state keeps all 3 nodes.
      const cut = c.nodes.get(cutHost)!;
      await c.until(
        'the cut leader steps down for lack of a quorum',
        () => cut.status!.role !== 'leader' && cut.status!.leader === null && cut.status!.quorum.ok === false,
        15000,
      );
      t.equal(
        cut.status!.nodes.length,
        3,
        `the cut node keeps its last state, nobody declared gone (${cut.status!.quorum.why})`,
      );
      const refused = await cut.propose([
        { type: 'LinkUp', source: cutId, sink: s1Of(cutHost), ip: lab.hosts[cutHost]!.lanIp, linkType: 'ethernet' },
      ]);
      t.match(
        refused,
        { ok: false, error: { code: 'TORUS_NO_QUORUM' } },
        'a proposal on the cut node is refused with TORUS_NO_QUORUM',
      );
      const newLeader = side[0]!.status!.leader!;
      const [s1, s2] = side.map((n) => `p${n.host}`) as [string, string];
      const proposal = await side[0]!.propose([
        { type: 'LinkUp', source: s1, sink: s2, ip: lab.hosts[side[1]!.host]!.lanIp, linkType: 'ethernet' },
      ]);
      t.ok(proposal.ok, 'proposal accepted during the partition');
      await lab.restore(cutHost, 'lan');
      await c.until('one cluster again', () => c.converged(3), 30000);
      const history = () =>
        c
          .live()
          .map(
            (n) =>
              `p${n.host}: ${n.lines
                .flatMap((l) => {
                  try {
                    const m = JSON.parse(l) as {
                      ev: string;
                      role: string;
                      term: number;
                      leader: string;
                      lastIndex: number;
                      nodes: string[];
                      links: number;
                    };
                    return m.ev === 'status'
                      ? [`${m.role}/${m.term}/${m.leader}/${m.lastIndex}/${m.nodes.length}/${m.links}`]
                      : [];
                  } catch {
                    return [];
                  }
                })
                .filter((x, i, a) => x !== a[i - 1])
                .join(' ')}`,
          )
          .join('\n');
      t.equal(c.leader()!.started!.nodeId, newLeader, 'the leader with the newer log stays', {
        history: `cut p${cutHost} (${s1} proposed; result ${JSON.stringify(proposal)})\n${history()}`,
      });
      t.ok(
        c.live().every((n) => n.status!.links === 1),
        'the link sequenced during the partition survived',
      );
    });
  },
);

t.test(
  'two nodes (docs/cluster.md, Quorum): losing the higher id keeps writes; losing the lowest id leaves the other read-only until it is back',
  { timeout: 120_000, skip: noLab },
  async (t) => {
    await withLab(t, { hosts: 2 }, async (lab) => {
      const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'torus-cl2-')));
      t.teardown(() => {
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      });
      const c = new LabCluster(lab);
      const spawn = (h: number) => c.spawn(h, { nodeId: `q${h}`, dataDir: dirs[h], clusterName: 'pair', timings });
      spawn(0);
      spawn(1);
      await c.until('formed', () => c.converged(2), 30000);
      const link = (a: number, b: number) => ({
        type: 'LinkUp',
        source: `q${a}`,
        sink: `q${b}`,
        ip: lab.hosts[b]!.lanIp,
        linkType: 'ethernet',
      });
      t.ok((await c.nodes.get(1)!.propose([link(1, 0)])).ok, 'a write through the follower');

      // q1 (higher id) dies: q0 holds exactly half including the lowest id, declares q1 gone and takes writes.
      c.nodes.get(1)!.kill9();
      const q0 = c.nodes.get(0)!;
      await c.until(
        'q0 alone leads, q1 declared gone',
        () => q0.status!.role === 'leader' && q0.status!.nodes.length === 1,
        15000,
      );
      t.ok((await q0.propose([link(0, 1)])).ok, 'q0 alone still takes writes');
      spawn(1);
      await c.until('q1 back', () => c.converged(2), 30000);
      t.ok(
        (await c.nodes.get(1)!.propose([link(1, 0), link(0, 1)])).ok,
        'links between them (NodeGone dropped the old ones)',
      );
      await c.until('links everywhere', () => c.live().every((n) => n.status!.links === 2));

      // q0 (the lowest id) dies: q1 keeps its state readable, has no leader, refuses writes with the reason.
      q0.kill9();
      const q1 = c.nodes.get(1)!;
      await c.until(
        'q1 without a leader, no quorum',
        () => q1.status!.leader === null && q1.status!.quorum.ok === false,
        15000,
      );
      t.equal(q1.status!.nodes.length, 2, 'q1 keeps its state: both nodes, nothing declared gone');
      t.equal(q1.status!.links, 2, 'and the links');
      t.match(
        await q1.propose([link(1, 0)]),
        { ok: false, error: { code: 'TORUS_NO_QUORUM' } },
        'a write on q1 is refused with TORUS_NO_QUORUM',
      );
      const before = q1.status!.lastIndex;

      // q0 comes back (without saved state: it may lead alone at first); q1's more complete log wins, nothing is lost.
      spawn(0);
      await c.until('one cluster again', () => c.converged(2), 30000);
      // Had the fresh q0's log won, the merged log would restart near index 1; q1's continues (q0's return as a new
      // incarnation drops its old links, by design).
      // The leader's NodeJoined for q0's new incarnation is applied once a quorum holds it (commit before apply), so
      // it may land a moment after the two agree on a digest.
      const rejoined = (): boolean =>
        c.live().every((st) => st.status!.lastIndex > before && st.status!.nodes.join() === 'q0@2,q1@2');
      await c.until("q0 listed as incarnation 2 on both, after q1's entries", rejoined, 15000).catch(() => undefined);
      const after = c.live().map((n) => n.status!);
      t.ok(rejoined(), `q1's log continues (${before} → ${after[0]!.lastIndex}), q0 rejoined as incarnation 2`, {
        after,
      });
    });
  },
);
