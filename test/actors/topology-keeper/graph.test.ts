import t from 'tap';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import {
  hasNode,
  inEdges,
  isLeaf,
  linksBetween,
  listNodes,
  neighbours,
  outEdges,
  subgraph,
} from '../../../src/actors/topology-keeper/graph.js';
import { instancesToReplace, toPlacementState } from '../../../src/actors/topology-keeper/placement-state.js';
import { decodePlacementInput } from '../../../src/actors/placement-planner/index.js';
import type { ClusterEvent } from '../../../src/protocols/events.js';
import { execWorkload, indexed, joined, linkUp, measured, plan2, profile } from '../../fixtures/topology/events.js';

// A daisy chain a — b — c plus a Thunderbolt cable a — b, and a node d that has not sent its profile yet.
const events: ClusterEvent[] = [
  joined('c'),
  joined('a'),
  joined('b'),
  joined('d'),
  profile('a', '10.77.0.1', 500),
  profile('b', '10.77.0.2', 500),
  profile('c', '10.77.0.3', 1000),
  {
    type: 'NodeProfileUpdated',
    nodeId: 'a',
    interfaces: [
      { name: 'eth0', ips: ['10.77.0.1'], type: 'ethernet' },
      { name: 'tb0', ips: ['10.77.1.1', 'fd00::1'], type: 'thunderbolt' },
    ],
    memory: { ramTotal: 2000, ramAvailable: 500 },
    rdmaEnabled: true,
    cached: { job: 0.5 },
  },
  linkUp('a', 'b', '10.77.0.2'),
  linkUp('a', 'b', '10.77.1.2', 'thunderbolt'),
  linkUp('b', 'a', '10.77.0.1'),
  linkUp('b', 'c', '10.77.0.3'),
  linkUp('c', 'b', '10.77.0.2'),
  measured('a', 'b', '10.77.1.2', 4e10, 0.05),
];
const state = applyEvents(emptyState, indexed(events));

t.test('graph queries', async (t) => {
  t.same(
    listNodes(state).map((n) => n.id),
    ['a', 'b', 'c', 'd'],
    'id order, whatever the join order',
  );
  t.same(
    outEdges(state, 'a').map((l) => l.ip),
    ['10.77.0.2', '10.77.1.2'],
  );
  t.same(
    inEdges(state, 'b').map((l) => l.source),
    ['a', 'a', 'c'],
  );
  t.same(
    linksBetween(state, 'a', 'b').map((l) => [l.type, l.bandwidthBps]),
    [
      ['ethernet', undefined],
      ['thunderbolt', 4e10],
    ],
  );
  t.same(linksBetween(state, 'a', 'c'), []);
  t.same(neighbours(state, 'b'), ['a', 'c']);
  t.same(neighbours(state, 'a'), ['b'], 'parallel edges count once');
  t.same(
    ['a', 'b', 'c', 'd', 'ghost'].map((n) => isLeaf(state, n)),
    [true, false, true, true, false],
    'leaf: ≤ 1 distinct out-neighbour, known node',
  );
  const sub = subgraph(state, ['a', 'b', 'ghost']);
  t.same(Object.keys(sub.nodes), ['a', 'b']);
  t.same(
    sub.links.map((l) => `${l.source}>${l.sink}`),
    ['a>b', 'a>b', 'b>a'],
  );
  t.ok(hasNode(state, 'd'));
  t.notOk(hasNode(state, 'toString'));
});

t.test('toPlacementState is accepted by the placement planner decoder', async (t) => {
  const ps = toPlacementState(state);
  const decoded = decodePlacementInput(JSON.parse(JSON.stringify(ps)));
  t.equal(decoded.nodes.length, 4);
  t.same(
    ps.nodes.find((n) => n.id === 'a'),
    {
      id: 'a',
      memory: { ramAvailable: 500, ramTotal: 2000 },
      rdmaEnabled: true,
      cached: { job: 0.5 },
      interfaces: [
        { name: 'eth0', ip: '10.77.0.1', type: 'ethernet' },
        { name: 'tb0', ip: '10.77.1.1', type: 'thunderbolt' },
        { name: 'tb0', ip: 'fd00::1', type: 'thunderbolt' },
      ],
    },
  );
  t.same(
    ps.nodes.find((n) => n.id === 'd'),
    { id: 'd', interfaces: [] },
    'no profile yet: no memory figure',
  );
  t.same(
    ps.links.find((l) => l.ip === '10.77.1.2'),
    { source: 'a', sink: 'b', ip: '10.77.1.2', type: 'thunderbolt', rttMs: 0.05, bandwidthBps: 4e10 },
  );
  t.equal(ps.links.length, state.links.length);
});

t.test('instancesToReplace lists instances whose nodes left', async (t) => {
  const s1 = applyEvents(
    state,
    indexed([{ type: 'InstanceCreated', instance: plan2, workload: execWorkload }], state.lastIndex + 1),
  );
  t.same(instancesToReplace(s1), []);
  const s2 = applyEvents(s1, indexed([{ type: 'NodeGone', nodeId: 'b', reason: 'timeout' }], s1.lastIndex + 1));
  t.match(instancesToReplace(s2), [
    { instanceId: 'inst-1', reason: 'node b left: timeout', lostNodes: ['b'], remainingNodes: ['a'] },
  ]);
  const s3 = applyEvents(
    s2,
    indexed([{ type: 'InstanceFailed', instanceId: 'inst-1', reason: 'cannot fit' }], s2.lastIndex + 1),
  );
  t.same(instancesToReplace(s3), [], 'a failed instance is not re-placed');
  // Defensive path: an active instance on a node missing from the state (e.g. installed from an old snapshot).
  const orphan = { ...s1, nodes: Object.fromEntries(Object.entries(s1.nodes).filter(([k]) => k !== 'a')) };
  t.match(instancesToReplace(orphan), [{ instanceId: 'inst-1', lostNodes: ['a'], reason: 'nodes left: a' }]);
});
