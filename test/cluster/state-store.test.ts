/**
 * Saving the replicated state in the data dir (src/cluster/stored-state.ts pure, state-store.ts files), then real
 * ClusterNodes on loopback: a whole-cluster restart continues from the saved log instead of an empty one.
 */
import t from 'tap';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterNode } from '../../src/cluster/cluster-node.js';
import { topologyReplica } from '../../src/cluster/topology-state.js';
import { appendEntries, emptyLog, lastHash, lastIndex, type LogState } from '../../src/cluster/log.js';
import { encodeLogLine, encodeStored, restoreStored } from '../../src/cluster/stored-state.js';
import { StateStore } from '../../src/cluster/state-store.js';
import { clusterNameHash } from '../../src/cluster/auth.js';
import { createLogger } from '../../src/runtime/log.js';
import type { ClusterState } from '../../src/core/topology/state.js';
import type { IndexedEnvelope } from '../../src/protocols/peer-frames.js';

const C = clusterNameHash('test');
const joined = (id: string, index: number, term = 1): IndexedEnvelope => ({
  index, term, at: 1000 + index,
  event: { type: 'NodeJoined', nodeId: id, name: id, incarnation: 1, apiPort: 7000, apiAddresses: [{ ip: '10.77.0.1', port: 7000 }], peerPort: 7001, version: 'v' },
});
const link = (index: number, term = 1): IndexedEnvelope => ({ index, term, event: { type: 'LinkUp', source: 'a', sink: 'b', ip: '10.77.0.2', linkType: 'ethernet' } });

/** The live side: a state and its log after applying `entries` (what a running node holds). */
function live(entries: IndexedEnvelope[]): { state: ClusterState; log: LogState } {
  let state = topologyReplica.initial();
  for (const e of entries) state = topologyReplica.apply(state, e);
  return { state, log: appendEntries(emptyLog, entries, 4096) };
}

const entries = [joined('a', 1), joined('b', 2), link(3), joined('c', 4, 2), link(5, 2)];

t.test('snapshot + log lines restore the same state, position and chain hash', async (t) => {
  const upTo3 = live(entries.slice(0, 3));
  const all = live(entries);
  const r = restoreStored(topologyReplica, C, encodeStored(topologyReplica, C, upTo3.state, upTo3.log, 1), entries.slice(3).map(encodeLogLine).join(''), 4096);
  t.same(r.warnings, []);
  t.equal(r.replayed, 2);
  t.equal(lastIndex(r.log), 5);
  t.equal(lastHash(r.log), lastHash(all.log), 'same chain hash as the live log: peers see the same log');
  t.equal(topologyReplica.digest(r.state), topologyReplica.digest(all.state), 'same state digest');
  t.same(Object.keys(r.state.nodes).sort(), ['a', 'b', 'c']);
  // Only a log (the first snapshot never written), and lines the snapshot already covers (crash before the log reset).
  t.equal(topologyReplica.digest(restoreStored(topologyReplica, C, null, entries.map(encodeLogLine).join(''), 4096).state), topologyReplica.digest(all.state));
  const overlap = restoreStored(topologyReplica, C, encodeStored(topologyReplica, C, upTo3.state, upTo3.log, 1), entries.map(encodeLogLine).join(''), 4096);
  t.equal(overlap.replayed, 2, 'lines up to the snapshot index are skipped');
  t.equal(lastHash(overlap.log), lastHash(all.log));
});

t.test('damage: torn last line, corrupt line, corrupt snapshot, another cluster, a gap', async (t) => {
  const upTo3 = live(entries.slice(0, 3));
  const snap = encodeStored(topologyReplica, C, upTo3.state, upTo3.log, 1);
  const lines = entries.slice(3).map(encodeLogLine);
  const torn = restoreStored(topologyReplica, C, snap, lines[0]! + lines[1]!.slice(0, 20), 4096);
  t.equal(torn.replayed, 1, 'the complete line is replayed');
  t.match(torn.warnings, [/partial line \(a crash while writing\): 1 entries replayed/]);
  const bad = restoreStored(topologyReplica, C, snap, 'garbage\n' + lines.join(''), 4096);
  t.equal(bad.replayed, 0);
  t.match(bad.warnings, [/line 1 is corrupt .*replay stopped after 0/]);
  const gap = restoreStored(topologyReplica, C, snap, lines[1]!, 4096);
  t.match(gap.warnings, [/index 5 after 3/]);
  t.equal(lastIndex(gap.log), 3);
  for (const [what, text] of [
    ['not JSON', '{"v":1,'],
    ['a wrong field', snap.replace('"lastTerm"', '"lastTurn"')],
    ['a changed state', snap.replace('"10.77.0.2"', '"10.77.0.9"')],
    ['a future version', snap.replace('"v":1', '"v":9')],
  ] as const) {
    const r = restoreStored(topologyReplica, C, text, lines.join(''), 4096);
    t.ok(r.badSnapshot, `${what}: refused`);
    t.match(r.warnings, [/saved snapshot is corrupt .*: starting empty/], `${what}: ${r.warnings[0]}`);
    t.equal(lastIndex(r.log), 0, `${what}: empty start (the log is not replayed onto nothing)`);
  }
  const other = restoreStored(topologyReplica, clusterNameHash('other'), snap, null, 4096);
  t.ok(other.badSnapshot);
  t.match(other.warnings, [/another cluster/]);
});

t.test('the store on disk: appends, compaction, a corrupt file moved aside with a warning', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const warnings: string[] = [];
  const log = { ...createLogger({ component: 'test' }), warn: (msg: string) => { warnings.push(msg); } } as ReturnType<typeof createLogger>;
  const open = () => new StateStore<ClusterState>({ dataDir: dir, replica: topologyReplica, cluster: C, retain: 4096, compactEvery: 3, log, now: () => 42 });
  const s1 = open();
  t.equal(lastIndex(s1.load().log), 0, 'nothing saved yet');
  let { state, log: l } = live([]);
  for (const e of entries) {
    state = topologyReplica.apply(state, e);
    l = appendEntries(l, [e], 4096);
    if (s1.dueForSnapshot) s1.save(state, l);
    else s1.append([e]);
  }
  s1.close();
  t.equal(readFileSync(s1.logPath, 'utf8').split('\n').filter(Boolean).length, 1, 'after 3 appends the 4th entry saved a snapshot: 1 line in the log');
  const r = open().load();
  t.equal(lastIndex(r.log), 5);
  t.equal(topologyReplica.digest(r.state), topologyReplica.digest(state));
  t.equal(readFileSync(s1.logPath, 'utf8'), '', 'loading rewrites the snapshot and empties the log');
  // A torn line after a crash does not get glued to the next append.
  appendFileSync(s1.logPath, encodeLogLine(link(6, 2)) + encodeLogLine(link(7, 2)).slice(0, 9));
  const s3 = open();
  t.equal(lastIndex(s3.load().log), 6);
  s3.append([link(7, 2)]);
  s3.close();
  t.equal(lastIndex(open().load().log), 7, 'the entry appended after a torn line is read back');
  // Garbage in the snapshot: a clear warning, an empty start, the file kept aside for a look.
  writeFileSync(s1.snapshotPath, 'not a snapshot');
  warnings.length = 0;
  t.equal(lastIndex(open().load().log), 0, 'empty start');
  t.match(warnings, [/saved snapshot is corrupt/, /moved the unusable snapshot aside/]);
  t.ok(readdirSync(s1.dir).some((f) => f.startsWith('snapshot.json.corrupt-')), 'kept as snapshot.json.corrupt-<time>');
  t.ok(existsSync(s1.snapshotPath), 'and a fresh snapshot written');
});

const plan = (a: string, b: string) => ({
  id: 'inst-1', backend: 'ring', sharding: 'pipeline', nodes: [a, b],
  shards: [{ node: a, rank: 0, worldSize: 2, startLayer: 0, endLayer: 6 }, { node: b, rank: 1, worldSize: 2, startLayer: 6, endLayer: 12 }],
  port: 50123, hostsByNode: { [a]: [{ ip: '0.0.0.0', port: 50123 }, { ip: '10.77.0.2', port: 50123 }], [b]: [{ ip: '10.77.0.1', port: 50123 }, { ip: '0.0.0.0', port: 50123 }] },
});
const workload = { kind: 'exec', id: 'job', memoryBytes: 1000, layers: 12, command: '/bin/echo', args: ['hi'] };

const timings = { heartbeatMs: 100, failureTimeoutMs: 800, settleMs: 300, electionStaggerMs: 100, candidateTimeoutMs: 500, gapRetryMs: 200 };

async function until(what: string, fn: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

t.test('loopback: the whole cluster stops and starts again: the saved log continues, nothing is lost', async (t) => {
  const dirs = ['a', 'b', 'c'].map(() => mkdtempSync(join(tmpdir(), 'torus-persist-')));
  t.teardown(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
  const ports = [0, 0, 0];
  const make = (i: number, incarnation: number) => {
    const id = ['a', 'b', 'c'][i]!;
    const peers = ports.flatMap((p, j) => (j !== i && p ? [`127.0.0.1:${p}`] : []));
    const n = new ClusterNode<ClusterState>({
      nodeId: id, incarnation, clusterName: 'test', replica: topologyReplica, peers, host: '127.0.0.1', mdns: false, addresses: ['127.0.0.1'],
      timings, tickMs: 20, persistDir: dirs[i], persistCompactEvery: 5, ...(ports[i] ? { port: ports[i] } : {}),
    });
    t.teardown(() => n.stop());
    return n;
  };
  let nodes = [make(0, 1)];
  ports[0] = await nodes[0]!.start();
  for (const i of [1, 2]) {
    const n = make(i, 1);
    ports[i] = await n.start();
    nodes.push(n);
  }
  await until('formed', () => nodes.every((n) => Object.keys(n.state.nodes).length === 3 && n.role().leader !== null) && new Set(nodes.map((n) => n.digest())).size === 1);
  for (let k = 0; k < 8; k++) await nodes[k % 3]!.propose({ type: 'LinkUp', source: 'a', sink: 'b', ip: `10.77.0.${k + 1}`, linkType: 'ethernet' });
  await nodes[1]!.propose({ type: 'InstanceCreated', instance: plan('a', 'b'), workload });
  await until('8 links and the instance everywhere', () => nodes.every((n) => n.state.links.length === 8 && Object.keys(n.state.instances).length === 1));
  const before = { index: nodes[0]!.lastIndex(), digest: nodes[0]!.digest() };
  await Promise.all(nodes.map((n) => n.stop()));

  // One node alone first: it restores the state, has no quorum (1 of 3), stays readable and refuses writes.
  const restored: { index: number }[] = [];
  const lone = make(0, 2);
  lone.on('restored', (r: { index: number }) => restored.push(r));
  await lone.start();
  t.same(restored.map((r) => r.index), [before.index], 'restored at the saved index');
  t.equal(lone.digest(), before.digest, 'same digest as before the stop');
  t.equal(lone.state.links.length, 8);
  await new Promise((r) => setTimeout(r, 1200));
  t.equal(lone.role().leader, null, 'alone with the membership {a, b, c}: no leader');
  t.equal(lone.role().quorum.ok, false);
  await t.rejects(lone.propose({ type: 'LinkUp', source: 'a', sink: 'b', ip: '10.77.0.99', linkType: 'ethernet' }), { code: 'TORUS_NO_QUORUM' });

  nodes = [lone, make(1, 2), make(2, 2)];
  await Promise.all(nodes.slice(1).map((n) => n.start()));
  await until('one cluster again', () => nodes.every((n) => n.role().leader !== null && n.lastIndex() > before.index) && new Set(nodes.map((n) => n.digest())).size === 1);
  t.ok(nodes.every((n) => Object.keys(n.state.instances).length === 1), 'the instance survived the whole-cluster restart');
  // (NodeJoined of each new incarnation drops that node's old links, by design: the profiler measures them again.)
  t.ok(nodes.every((n) => Object.values(n.state.nodes).every((x) => x.incarnation === 2)), 'every node rejoined as incarnation 2');
});
