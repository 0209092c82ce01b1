/**
 * Saving the replicated state in the data dir (src/actors/cluster/storage/stored-state.ts pure, state-store.ts files), then real
 * ClusterNodes on loopback: a whole-cluster restart continues from the saved log instead of an empty one.
 */
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterNode } from '../../../src/actors/cluster/cluster-node.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import {
  appendEntries,
  emptyLog,
  lastHash,
  lastIndex,
  type LogState,
} from '../../../src/actors/cluster/agreement/log.js';
import {
  encodeCommitLine,
  encodeLogLine,
  encodeStored,
  positionOf,
  restoreStored,
} from '../../../src/actors/cluster/storage/stored-state.js';
import { realFs, type DurableFs } from '../../../src/native/durable-fs.js';
import { StateStore } from '../../../src/actors/cluster/storage/state-store.js';
import { clusterNameHash } from '../../../src/actors/cluster/transport/auth.js';
import { createLogger } from '../../../src/runtime/log.js';
import type { ClusterState } from '../../../src/actors/topology-keeper/state.js';
import type { IndexedEnvelope } from '../../../src/protocols/peer-frames.js';
import { until } from './fixtures/until.js';

const C = clusterNameHash('test');
const joined = (id: string, index: number, term = 1): IndexedEnvelope => ({
  index,
  term,
  at: 1000 + index,
  event: {
    type: 'NodeJoined',
    nodeId: id,
    name: id,
    incarnation: 1,
    apiPort: 7000,
    apiAddresses: [{ ip: '10.77.0.1', port: 7000 }],
    peerPort: 7001,
    version: 'v',
  },
});
const link = (index: number, term = 1): IndexedEnvelope => ({
  index,
  term,
  event: { type: 'LinkUp', source: 'a', sink: 'b', ip: '10.77.0.2', linkType: 'ethernet' },
});

/** The live side: a state and its log after applying `entries` (what a running node holds, all committed). */
function live(entries: IndexedEnvelope[]): { state: ClusterState; log: LogState } {
  let state = topologyReplica.initial();
  for (const e of entries) state = topologyReplica.apply(state, e);
  return { state, log: appendEntries(emptyLog, entries) };
}

const entries = [joined('a', 1), joined('b', 2), link(3), joined('c', 4, 2), link(5, 2)];
const at = (log: LogState) => positionOf(log, lastIndex(log));
const texts = (snapshot: string | null, log: string | null, prevSnapshot: string | null = null) => ({
  snapshot,
  prevSnapshot,
  log,
});

t.test(
  'snapshot + checksummed log records restore the same state, position and chain hash; only committed entries are applied',
  async (t) => {
    const upTo3 = live(entries.slice(0, 3));
    const all = live(entries);
    const snap = encodeStored(topologyReplica, C, upTo3.state, at(upTo3.log), 1);
    const r = restoreStored(
      topologyReplica,
      C,
      texts(snap, entries.slice(3).map(encodeLogLine).join('') + encodeCommitLine(5)),
      4096,
    );
    t.same(r.warnings, []);
    t.equal(r.replayed, 2);
    t.equal(r.commit, 5);
    t.equal(lastIndex(r.log), 5);
    t.equal(lastHash(r.log), lastHash(all.log), 'same chain hash as the live log: peers see the same log');
    t.equal(topologyReplica.digest(r.state), topologyReplica.digest(all.state), 'same state digest');
    // Without a commit mark for them, entries 4-5 are held in the log but not applied (not known committed).
    const held = restoreStored(topologyReplica, C, texts(snap, entries.slice(3).map(encodeLogLine).join('')), 4096);
    t.equal(held.commit, 3);
    t.equal(lastIndex(held.log), 5, 'uncommitted entries are kept, never dropped');
    t.equal(topologyReplica.digest(held.state), topologyReplica.digest(upTo3.state), 'and not applied');
    t.same(Object.keys(held.state.nodes).sort(), ['a', 'b']);
  },
);

t.test(
  'damage is refused with the file, the record and the byte offset; only a torn last record (never fsynced) is dropped',
  async (t) => {
    const upTo3 = live(entries.slice(0, 3));
    const snap = encodeStored(topologyReplica, C, upTo3.state, at(upTo3.log), 1);
    const lines = entries.slice(3).map(encodeLogLine);
    const torn = restoreStored(topologyReplica, C, texts(snap, lines[0]! + lines[1]!.slice(0, 20)), 4096);
    t.equal(lastIndex(torn.log), 4, 'the complete record is kept');
    t.match(torn.warnings, [/partial record/]);
    const flipped = lines[1]!.replace('"term":2', '"term":3');
    t.throws(() => restoreStored(topologyReplica, C, texts(snap, lines[0]! + flipped + encodeCommitLine(5)), 4096), {
      code: 'TORUS_STATE_CORRUPT',
      file: 'log.jsonl',
      record: 2,
      offset: Buffer.byteLength(lines[0]!),
      message: /log\.jsonl record 2 at byte offset \d+: checksum mismatch.*--repair-state/,
    });
    t.throws(() => restoreStored(topologyReplica, C, texts(snap, `garbage\n${lines.join('')}`), 4096), {
      code: 'TORUS_STATE_CORRUPT',
      record: 1,
      offset: 0,
    });
    t.throws(() => restoreStored(topologyReplica, C, texts(snap, lines[1]!), 4096), {
      message: /entry 5 does not follow the snapshot at 3/,
    });
    for (const [what, text] of [
      ['not JSON', '{"v":1,'],
      ['a wrong field', snap.replace('"lastTerm"', '"lastTurn"')],
      ['a changed state', snap.replace('"10.77.0.2"', '"10.77.0.9"')],
      ['a future version', snap.replace('"v":1', '"v":9')],
    ] as const) {
      t.throws(
        () => restoreStored(topologyReplica, C, texts(text, lines.join('')), 4096),
        { code: 'TORUS_STATE_CORRUPT', file: 'snapshot.json' },
        `${what}: refused, the log does not cover the range`,
      );
    }
    // A damaged newest snapshot is rebuilt when the log covers the range: from the start, or from the older snapshot.
    const fromStart = restoreStored(
      topologyReplica,
      C,
      texts('garbage', entries.map(encodeLogLine).join('') + encodeCommitLine(5)),
      4096,
    );
    t.equal(
      topologyReplica.digest(fromStart.state),
      topologyReplica.digest(live(entries).state),
      'rebuilt from a log that starts at 1',
    );
    t.match(fromStart.warnings, [/snapshot\.json is damaged .*rebuilt/]);
    const upTo1 = live(entries.slice(0, 1));
    const older = encodeStored(topologyReplica, C, upTo1.state, at(upTo1.log), 1);
    const fromOlder = restoreStored(
      topologyReplica,
      C,
      texts('garbage', entries.slice(1).map(encodeLogLine).join('') + encodeCommitLine(5), older),
      4096,
    );
    t.equal(
      topologyReplica.digest(fromOlder.state),
      topologyReplica.digest(live(entries).state),
      'rebuilt from snapshot.prev.json + the log',
    );
    t.throws(() => restoreStored(topologyReplica, clusterNameHash('other'), texts(snap, null), 4096), {
      code: 'TORUS_STATE_CORRUPT',
      message: /another cluster/,
    });
  },
);

/** Counts fsyncs (and passes every call through to the real fs). */
function countingFs(): DurableFs & { fsyncs: number } {
  const fs = { ...realFs, fsyncs: 0 };
  fs.fsyncSync = (fd: number) => {
    fs.fsyncs++;
    realFs.fsyncSync(fd);
  };
  return fs;
}

t.test(
  'the store on disk: group fsync, snapshots bound the log, vote saved, damage refused, --repair-state keeps the readable prefix',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-store-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const warnings: string[] = [];
    const log = {
      ...createLogger({ component: 'test' }),
      warn: (msg: string) => {
        warnings.push(msg);
      },
    } as ReturnType<typeof createLogger>;
    const fs = countingFs();
    const open = (repair = false) =>
      new StateStore<ClusterState>({
        dataDir: dir,
        replica: topologyReplica,
        cluster: C,
        retain: 4096,
        compactEvery: 3,
        log,
        now: () => 42,
        fs,
        repair,
      });
    const s1 = open();
    t.equal(lastIndex(s1.load().log), 0, 'nothing saved yet');
    let { state, log: l } = live([]);
    fs.fsyncs = 0;
    s1.append(entries.slice(0, 2));
    s1.append(entries.slice(2, 3));
    t.equal(fs.fsyncs, 0, 'appending alone does not fsync');
    t.equal(s1.flush(), 3, 'one flush makes everything written durable');
    t.equal(fs.fsyncs, 1, 'with one fsync for the group (group commit)');
    t.equal(s1.flush(), 3);
    t.equal(fs.fsyncs, 1, 'nothing new written: no fsync');
    for (const e of entries.slice(0, 3)) state = topologyReplica.apply(state, e);
    l = appendEntries(l, entries.slice(0, 3));
    t.ok(s1.dueForSnapshot);
    s1.save(state, 3, l);
    s1.append(entries.slice(3));
    l = appendEntries(l, entries.slice(3));
    s1.noteCommit(4);
    s1.flush();
    s1.saveVote({ term: 3, votedTerm: 3, votedFor: 'b' });
    s1.close();
    const before = fs.fsyncs;
    const r = open().load();
    t.equal(r.commit, 4, 'commit mark read back');
    t.equal(lastIndex(r.log), 5, 'the uncommitted entry 5 is kept');
    t.same(r.vote, { term: 3, votedTerm: 3, votedFor: 'b' }, 'the vote is read back');
    t.ok(fs.fsyncs > before, 'loading rewrites the log durably');
    // Damage one record: the start is refused, naming the file, record and offset; nothing is changed.
    const text = readFileSync(s1.logPath, 'utf8');
    const lines = text.split('\n');
    const bad = lines[1]!.replace('"linkType":"ethernet"', '"linkType":"wifi"');
    writeFileSync(s1.logPath, [lines[0], bad, ...lines.slice(2)].join('\n'));
    const offset = Buffer.byteLength(lines[0]!) + 1;
    t.throws(() => open().load(), {
      code: 'TORUS_STATE_CORRUPT',
      message: new RegExp(
        `${s1.logPath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} record 2 at byte offset ${offset}: checksum mismatch`,
      ),
    });
    t.equal(
      readFileSync(s1.logPath, 'utf8'),
      [lines[0], bad, ...lines.slice(2)].join('\n'),
      'a refused start changes nothing',
    );
    const repaired = open(true).load();
    t.ok(repaired.mustJoin, 'repaired: must catch up before it votes or leads');
    t.equal(lastIndex(repaired.log), 4, 'the readable prefix (entry 4) is kept');
    t.ok(
      readdirSync(s1.dir).some((f) => f.startsWith('log.jsonl.damaged-')),
      'the rest is moved aside',
    );
    t.ok(existsSync(join(s1.dir, 'repair-pending')), 'and the repair is remembered until the node caught up');
    t.ok(open().load().mustJoin, 'also across another restart');
    // A vote file that does not parse is refused too.
    writeFileSync(s1.votePath, '{"term":');
    t.throws(() => open().load(), { code: 'TORUS_STATE_CORRUPT', message: /vote\.json/ });
  },
);

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

const timings = {
  heartbeatMs: 100,
  failureTimeoutMs: 800,
  settleMs: 300,
  electionStaggerMs: 100,
  candidateTimeoutMs: 500,
  gapRetryMs: 200,
};

t.test('loopback: the whole cluster stops and starts again: the saved log continues, nothing is lost', async (t) => {
  const dirs = ['a', 'b', 'c'].map(() => mkdtempSync(join(tmpdir(), 'torus-persist-')));
  t.teardown(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const ports = [0, 0, 0];
  const make = (i: number, incarnation: number) => {
    const id = ['a', 'b', 'c'][i]!;
    const peers = ports.flatMap((p, j) => (j !== i && p ? [`127.0.0.1:${p}`] : []));
    const n = new ClusterNode<ClusterState>({
      nodeId: id,
      incarnation,
      clusterName: 'test',
      replica: topologyReplica,
      peers,
      host: '127.0.0.1',
      mdns: false,
      addresses: ['127.0.0.1'],
      timings,
      tickMs: 20,
      persistDir: dirs[i],
      persistCompactEvery: 5,
      ...(ports[i] ? { port: ports[i] } : {}),
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
  await until(
    'formed',
    () =>
      nodes.every((n) => Object.keys(n.state.nodes).length === 3 && n.role().leader !== null) &&
      new Set(nodes.map((n) => n.digest())).size === 1,
  );
  for (let k = 0; k < 8; k++)
    await nodes[k % 3]!.propose({
      type: 'LinkUp',
      source: 'a',
      sink: 'b',
      ip: `10.77.0.${k + 1}`,
      linkType: 'ethernet',
    });
  await nodes[1]!.propose({ type: 'InstanceCreated', instance: plan('a', 'b'), workload });
  await until('8 links and the instance everywhere', () =>
    nodes.every((n) => n.state.links.length === 8 && Object.keys(n.state.instances).length === 1),
  );
  const before = { index: nodes[0]!.lastIndex(), digest: nodes[0]!.digest() };
  await Promise.all(nodes.map((n) => n.stop()));

  // One node alone first: it restores the state, has no quorum (1 of 3), stays readable and refuses writes.
  const restored: { index: number }[] = [];
  const lone = make(0, 2);
  lone.on('restored', (r: { index: number }) => restored.push(r));
  await lone.start();
  t.same(
    restored.map((r) => r.index),
    [before.index],
    'restored at the saved index',
  );
  t.equal(lone.digest(), before.digest, 'same digest as before the stop');
  t.equal(lone.state.links.length, 8);
  await new Promise((r) => setTimeout(r, 1200));
  t.equal(lone.role().leader, null, 'alone with the membership {a, b, c}: no leader');
  t.equal(lone.role().quorum.ok, false);
  await t.rejects(lone.propose({ type: 'LinkUp', source: 'a', sink: 'b', ip: '10.77.0.99', linkType: 'ethernet' }), {
    code: 'TORUS_NO_QUORUM',
  });

  nodes = [lone, make(1, 2), make(2, 2)];
  await Promise.all(nodes.slice(1).map((n) => n.start()));
  await until(
    'one cluster again',
    () =>
      nodes.every(
        (n) =>
          n.role().leader !== null &&
          n.lastIndex() > before.index &&
          Object.values(n.state.nodes).every((x) => x.incarnation === 2),
      ) && new Set(nodes.map((n) => n.digest())).size === 1,
  );
  t.ok(
    nodes.every((n) => Object.keys(n.state.instances).length === 1),
    'the instance survived the whole-cluster restart',
  );
  // (NodeJoined of each new incarnation drops that node's old links, by design: the profiler measures them again.)
  t.ok(
    nodes.every((n) => Object.values(n.state.nodes).every((x) => x.incarnation === 2)),
    'every node rejoined as incarnation 2',
  );
});
