import t from 'tap';
import { applyEvents } from '../../src/actors/topology-keeper/apply.js';
import { emptyState } from '../../src/actors/topology-keeper/state.js';
import { toPlacementState } from '../../src/actors/topology-keeper/placement-state.js';
import { withArtifactHoldings } from '../../src/actors/placement-planner/leader/artifact-placement.js';
import {
  decodePlacementInput,
  decodePlacementRequest,
  planPlacement,
  isRefusal,
} from '../../src/actors/placement-planner/index.js';
import type { ClusterEvent } from '../../src/protocols/events.js';

const GB = 1e9;
const ART = 'cd'.repeat(32);
const nodes = ['a', 'b', 'c'];

function cluster(extra: ClusterEvent[]) {
  const events: ClusterEvent[] = [];
  nodes.forEach((id, i) => {
    events.push({
      type: 'NodeJoined',
      nodeId: id,
      name: id,
      incarnation: 1,
      apiPort: 52515,
      apiAddresses: [{ ip: `10.77.0.${i + 1}`, port: 52515 }],
      version: 't',
    });
    events.push({
      type: 'NodeProfileUpdated',
      nodeId: id,
      interfaces: [{ name: 'lan0', ips: [`10.77.0.${i + 1}`], type: 'ethernet' }],
      memory: { ramTotal: 64 * GB, ramAvailable: 32 * GB },
    });
  });
  for (const s of nodes)
    for (const d of nodes)
      if (s !== d) {
        const ip = `10.77.0.${nodes.indexOf(d) + 1}`;
        events.push({ type: 'LinkUp', source: s, sink: d, ip, linkType: 'ethernet' });
        events.push({ type: 'LinkMeasured', source: s, sink: d, ip, rttMs: 0.2, bandwidthBps: 1e9, measuredAt: 1 });
      }
  return applyEvents(
    emptyState,
    [...events, ...extra].map((event, i) => ({ index: i + 1, term: 1, event })),
  );
}

const request = (artifactBytes?: number) =>
  decodePlacementRequest({
    workload: { id: 'llm', memoryBytes: 10 * GB, layers: 8, ...(artifactBytes !== undefined ? { artifactBytes } : {}) },
    sharding: 'pipeline',
    backend: 'ring',
  });

t.test("placement prefers the node holding the workload's artifact and says what each choice moves", async (t) => {
  const state = cluster([
    { type: 'ArtifactHeld', nodeId: 'c', artifactId: ART, name: 'weights', bytes: 8 * GB, chunks: 100, have: 100 },
    { type: 'ArtifactHeld', nodeId: 'b', artifactId: ART, name: 'weights', bytes: 8 * GB, chunks: 100, have: 25 },
  ]);
  const base = toPlacementState(state);
  const without = planPlacement(decodePlacementInput(base), request(), { seed: 1 });
  t.notOk(isRefusal(without));
  if (isRefusal(without)) return;
  t.same(without.instance.nodes, ['a'], 'without the rule: the first node by id (all else equal)');

  const held = withArtifactHoldings(base, state, 'llm', [ART]);
  t.equal(held.artifactBytes, 8 * GB);
  t.same(
    held.placement.nodes.map((n) => n.cached?.llm),
    [0, 0.25, 1],
  );
  const plan = planPlacement(decodePlacementInput(held.placement), request(held.artifactBytes), { seed: 1 });
  if (isRefusal(plan)) {
    t.fail(plan.refusal.message);
    return;
  }
  t.same(plan.instance.nodes, ['c'], 'the complete holder is chosen');
  t.equal(plan.explanation.chosen!.bytesToMove, 0);
  t.match(
    plan.explanation.chosen!.why.join('\n'),
    /artifacts: 0 of 8000000000 bytes per node to move to this set \(c 0\)/,
  );
  const moves = Object.fromEntries(plan.explanation.candidates.map((c) => [c.nodes.join(','), c.bytesToMove]));
  t.same(moves, { c: 0, b: 6 * GB, a: 8 * GB }, 'every candidate says how many bytes it would move');
});

t.test('an artifact no node holds is refused before planning', async (t) => {
  const state = cluster([]);
  t.throws(() => withArtifactHoldings(toPlacementState(state), state, 'llm', [ART]), {
    code: 'TORUS_ARTIFACT_UNKNOWN',
  });
});

t.test(
  'holdings: a node that leaves holds nothing; a contradicting size is ignored; snapshots round-trip',
  async (t) => {
    const { encodeSnapshot, decodeSnapshot } = await import('../../src/actors/topology-keeper/snapshot.js');
    const { stateDigest } = await import('../../src/actors/topology-keeper/digest.js');
    const plain = cluster([]);
    t.equal(plain.artifacts, undefined, 'no artifacts key while nothing is held (digests of older states unchanged)');
    const s = cluster([
      { type: 'ArtifactHeld', nodeId: 'a', artifactId: ART, name: 'w', bytes: 100, chunks: 2, have: 2 },
      { type: 'ArtifactHeld', nodeId: 'b', artifactId: ART, name: 'w', bytes: 999, chunks: 2, have: 2 },
      { type: 'ArtifactHeld', nodeId: 'ghost', artifactId: ART, name: 'w', bytes: 100, chunks: 2, have: 2 },
      { type: 'ArtifactHeld', nodeId: 'c', artifactId: ART, name: 'w', bytes: 100, chunks: 2, have: 1 },
    ]);
    t.same(Object.keys(s.artifacts![ART]!.holders).sort(), ['a', 'c']);
    t.same(decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(s)))).state, s);
    const gone = applyEvents(s, [
      { index: s.lastIndex + 1, term: 1, event: { type: 'NodeGone', nodeId: 'a', reason: 'x' } },
    ]);
    t.same(Object.keys(gone.artifacts![ART]!.holders), ['c']);
    const dropped = applyEvents(gone, [
      {
        index: gone.lastIndex + 1,
        term: 1,
        event: { type: 'ArtifactDropped', nodeId: 'c', artifactId: ART, reason: 'rm' },
      },
    ]);
    t.equal(dropped.artifacts, undefined);
    t.equal(
      stateDigest({ ...dropped, lastIndex: plain.lastIndex }),
      stateDigest({ ...plain, nodes: dropped.nodes, links: dropped.links }),
      'back to the artifact-free shape',
    );
    const bad = JSON.parse(JSON.stringify(encodeSnapshot(s)));
    bad.state.artifacts[ART].holders.a.have = 3;
    t.throws(() => decodeSnapshot(bad), { code: 'TORUS_PROTOCOL_INVALID' }, 'have above chunks refused');
  },
);
