import t from 'tap';
import {
  cpuBoundSeconds,
  describeLimit,
  distributionBound,
  sharedPrefixBits,
  type BoundLink,
} from '../../src/artifacts/distribution-bound.js';
import { boundFromState, evenChunks } from '../../src/artifacts/state-bound.js';
import type { ClusterState } from '../../src/actors/topology-keeper/state.js';

const G = 1e9;
const MiB = 2 ** 20;
const lanIp = (h: number): string => `10.77.1.${h + 1}`;
/** A switch: every ordered pair of hosts, at the sink's LAN address. */
const lan = (hosts: number[], bps: (src: number, sink: number) => number): BoundLink[] =>
  hosts.flatMap((a) =>
    hosts
      .filter((b) => b !== a)
      .map((b) => ({ source: `h${a}`, sink: `h${b}`, ip: lanIp(b), bandwidthBps: bps(a, b) })),
  );
/** A point-to-point cable between a and b: its own /30 (a gets .1, b .2). */
const cable = (a: number, b: number, bps: number, net: number): BoundLink[] => [
  { source: `h${a}`, sink: `h${b}`, ip: `10.77.${net}.2`, bandwidthBps: bps },
  { source: `h${b}`, sink: `h${a}`, ip: `10.77.${net}.1`, bandwidthBps: bps },
];
const chunks = (n: number, size = 4 * MiB): number[] => Array(n).fill(size);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

t.test('one holder on a LAN: links into one port share it, the holder port bounds the three receivers', async (t) => {
  const hosts = [0, 1, 2, 3];
  const ports = Object.fromEntries(hosts.map((h) => [`h${h}`, [[lanIp(h)]]]));
  const b = distributionBound({
    links: lan(hosts, () => 1 * G),
    ports,
    chunkBytes: chunks(256), // 1 GiB
    holds: { h0: 'all' },
    needs: { h1: 'all', h2: 'all', h3: 'all' },
  });
  // Each receiver takes 1 GiB through its one 1 Gbit/s port (not 3 Gbit/s: three links share it); the holder's
  // port sends the 1 GiB once. Both take 8.59 s.
  t.equal(b.seconds.toFixed(3), ((2 ** 30 * 8) / G).toFixed(3));
  t.equal(b.receivedBytes, 3 * 2 ** 30);
  t.same(
    b.terms.map((x) => [x.node, x.side, x.capacityBps]),
    [
      ['h0', 'out', G],
      ['h1', 'in', G],
      ['h2', 'in', G],
      ['h3', 'in', G],
    ],
  );
  t.same(b.unmeasured, []);
});

t.test('a ring beside the LAN: several ports into a node add up; a slower host is named as the limit', async (t) => {
  const hosts = [0, 1, 2, 3];
  // 4 Gbit/s cables h0-h1, h1-h2, h2-h3, h3-h0 beside a 1 Gbit/s LAN; h3's LAN port is 0.25 Gbit/s.
  const slowLan = (a: number, b: number): number => (a === 3 || b === 3 ? 0.25 * G : G);
  const links = [
    ...lan(hosts, slowLan),
    ...cable(0, 1, 4 * G, 10),
    ...cable(1, 2, 4 * G, 11),
    ...cable(2, 3, 4 * G, 12),
    ...cable(3, 0, 4 * G, 13),
  ];
  const ports: Record<string, string[][]> = {
    h0: [[lanIp(0)], ['10.77.10.1'], ['10.77.13.2']],
    h1: [[lanIp(1)], ['10.77.10.2'], ['10.77.11.1']],
    h2: [[lanIp(2)], ['10.77.11.2'], ['10.77.12.1']],
    h3: [[lanIp(3)], ['10.77.12.2'], ['10.77.13.1']],
  };
  // A 4-stage pipeline: each node needs one quarter; h0 holds everything.
  const b = distributionBound({
    links,
    ports,
    chunkBytes: chunks(256),
    holds: { h0: 'all' },
    needs: { h0: range(0, 64), h1: range(64, 128), h2: range(128, 192), h3: range(192, 256) },
  });
  const byNode = Object.fromEntries(b.terms.map((x) => [`${x.node} ${x.side}`, x]));
  t.equal(byNode['h0 in'], undefined, 'the holder needs nothing');
  t.equal(byNode['h0 out']!.capacityBps, 9 * G, 'two cables and the LAN port leave h0');
  t.equal(byNode['h0 out']!.bytes, 192 * 4 * MiB, 'three quarters leave the holder');
  t.equal(byNode['h2 in']!.capacityBps, 9 * G, 'h2 takes in through both cables and the LAN at once');
  t.equal(byNode['h3 in']!.capacityBps, 8.25 * G, 'h3: two cables and its slower LAN port');
  t.equal(b.limit!.node, 'h0');
  t.equal(b.limit!.side, 'out');
  t.match(describeLimit(b), /^0\.\d\d s \(out: h0 sends 768 MiB at 9\.00 Gbit\/s\)$/);

  // Without the ring, the slower host's port is what holds (256 MiB at 0.25 Gbit/s against 768 MiB from h0 at 1).
  const lanOnly = distributionBound({
    links: lan(hosts, slowLan),
    ports,
    chunkBytes: chunks(256),
    holds: { h0: 'all' },
    needs: { h1: range(64, 128), h2: range(128, 192), h3: range(192, 256) },
  });
  t.equal(lanOnly.limit!.node, 'h3');
  t.equal(lanOnly.limit!.side, 'in');
  t.equal(lanOnly.limit!.capacityBps, 0.25 * G);
  t.equal(lanOnly.seconds, (256 * MiB * 8) / (0.25 * G));
  t.equal(lanOnly.terms[1]!.node, 'h0', 'the holder next');
});

t.test('what receivers hold is theirs to relay: it never leaves the holders, nor enters them again', async (t) => {
  const hosts = [0, 1, 2];
  const b = distributionBound({
    links: lan(hosts, () => G),
    ports: Object.fromEntries(hosts.map((h) => [`h${h}`, [[lanIp(h)]]])),
    chunkBytes: chunks(10),
    holds: { h0: 'all', h1: range(0, 5) },
    needs: { h1: 'all', h2: 'all' },
  });
  const byNode = Object.fromEntries(b.terms.map((x) => [`${x.node} ${x.side}`, x.bytes]));
  t.equal(byNode['h1 in'], 5 * 4 * MiB, 'h1 takes only what it lacks');
  t.equal(byNode['h2 in'], 10 * 4 * MiB);
  t.equal(byNode['h0 out'], 5 * 4 * MiB, 'chunks 0-4 can come from h1: only 5-9 must leave h0');
  t.equal(b.receivedBytes, 15 * 4 * MiB);
});

t.test('two holders: what only one has is its own term, all they must send is a joint one', async (t) => {
  const hosts = [0, 1, 2];
  const b = distributionBound({
    links: lan(hosts, (a) => (a === 0 ? 2 * G : G)),
    ports: Object.fromEntries(hosts.map((h) => [`h${h}`, [[lanIp(h)]]])),
    chunkBytes: chunks(8),
    holds: { h0: 'all', h1: range(0, 2) },
    needs: { h2: 'all' },
  });
  const byNode = Object.fromEntries(b.terms.map((x) => [`${x.node} ${x.side}`, x]));
  t.equal(byNode['h0 out']!.bytes, 6 * 4 * MiB);
  t.equal(byNode['h1 out'], undefined, 'h1 has nothing h0 does not');
  t.equal(byNode['holders out']!.bytes, 8 * 4 * MiB);
  t.equal(byNode['holders out']!.capacityBps, 3 * G);
  t.equal(byNode['h2 in']!.capacityBps, 2 * G, 'h2 port: the fastest link into it');
});

t.test('sending ports by the longest shared prefix; links with no known port each count alone', async (t) => {
  const links: BoundLink[] = [
    { source: 'a', sink: 'b', ip: '10.77.1.2', bandwidthBps: G },
    { source: 'a', sink: 'c', ip: '10.77.1.3', bandwidthBps: G },
    { source: 'a', sink: 'c', ip: '10.77.9.2', bandwidthBps: 4 * G },
  ];
  const needs = { b: 'all' as const, c: 'all' as const };
  const withPorts = distributionBound({
    links,
    ports: { a: [['10.77.1.1'], ['10.77.9.1']] },
    chunkBytes: chunks(1),
    holds: { a: 'all' },
    needs,
  });
  t.equal(withPorts.terms.find((x) => x.node === 'a')!.capacityBps, 5 * G, 'LAN (shared by b and c) + the cable');
  const without = distributionBound({ links, chunkBytes: chunks(1), holds: { a: 'all' }, needs });
  t.equal(without.terms.find((x) => x.node === 'a')!.capacityBps, 6 * G, 'no ports known: never fewer bits/s');
  t.equal(sharedPrefixBits('10.77.1.1', '10.77.1.3'), 30);
  t.equal(sharedPrefixBits('fe80::1', 'fe80::2'), 126);
  t.equal(sharedPrefixBits('10.0.0.1', 'fe80::1'), 0);
  t.equal(sharedPrefixBits('not an ip', '10.0.0.1'), 0);
});

t.test('unmeasured links, other nodes, nothing to move', async (t) => {
  const b = distributionBound({
    links: [
      { source: 'a', sink: 'b', ip: '10.77.1.2' },
      { source: 'x', sink: 'b', ip: '10.77.1.2', bandwidthBps: 100 * G }, // x holds nothing and needs nothing
      { source: 'a', sink: 'a', ip: '10.77.1.1', bandwidthBps: 100 * G },
    ],
    chunkBytes: chunks(2),
    holds: { a: 'all' },
    needs: { b: [0, 1, 7, -1, 1.5] },
  });
  t.same(b.unmeasured, ['b', 'a']);
  t.equal(b.seconds, 0);
  t.equal(b.limit, undefined);
  t.equal(b.receivedBytes, 8 * MiB, 'chunk indices outside the artifact are ignored');
  const none = distributionBound({ links: [], chunkBytes: chunks(2), holds: { a: 'all' }, needs: { a: 'all' } });
  t.equal(none.seconds, 0);
  t.equal(describeLimit(none), 'nothing to move');
});

t.test('the CPU bound: bytes everyone receives × CPU per byte / cores', async (t) => {
  t.equal(cpuBoundSeconds(3 * 2 ** 30, 1e-9, 2), (3 * 2 ** 30 * 1e-9) / 2);
  t.equal(cpuBoundSeconds(100, 1e-9, 0), 0);
});

t.test('from the state: complete holders, interfaces as ports, measured links', async (t) => {
  const node = (id: string, ips: string[][]) => ({
    id,
    name: id,
    incarnation: 1,
    apiPort: 52515,
    apiAddresses: [{ ip: ips[0]![0]!, port: 52515 }],
    version: 't',
    profile: {
      interfaces: ips.map((x, i) => ({ name: `eth${i}`, ips: x, type: 'ethernet' as const })),
      memory: { ramAvailable: 1, ramTotal: 1 },
    },
  });
  const state = {
    lastIndex: 1,
    lastTerm: 1,
    nodes: { a: node('a', [['10.77.1.1']]), b: node('b', [['10.77.1.2']]), c: node('c', [['10.77.1.3']]) },
    links: lan([0, 1, 2], () => G).map((l) => ({
      ...l,
      source: 'abc'[Number(l.source.slice(1))]!,
      sink: 'abc'[Number(l.sink.slice(1))]!,
      type: 'ethernet' as const,
    })),
    instances: {},
    tasks: {},
    artifacts: {
      ['ab'.repeat(32)]: { name: 'w', bytes: 10 * MiB + 5, chunks: 3, holders: { a: { have: 3 }, b: { have: 1 } } },
    },
  } as unknown as ClusterState;
  const b = boundFromState(state, 'ab'.repeat(32), { b: 'all', c: 'all' })!;
  t.equal(b.limit!.node, 'a', 'a sends everything (b is partial: its chunks are not known)');
  t.equal(b.terms.find((x) => x.node === 'a')!.bytes, 10 * MiB + 5);
  t.same(
    evenChunks(10 * MiB + 5, 3).reduce((s, x) => s + x, 0),
    10 * MiB + 5,
  );
  t.equal(boundFromState(state, 'cd'.repeat(32), { b: 'all' }), undefined);
});
