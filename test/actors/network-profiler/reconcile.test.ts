/**
 * Regression tests (pure) for two bugs found end to end. After a partition healed (test/e2e/partition.test.ts)
 * the merged state had lost the majority nodes' profiles and links and nothing re-sent them (1 link of 6, for
 * good). Under CI load (test/e2e/cluster-profile.test.ts) one link's confirming sample never reached the state,
 * which kept the first sample. The profiler now re-sends what the replicated state lacks of its own facts, or
 * holds in an older version (src/actors/network-profiler/reconcile.ts).
 */
import t from 'tap';
import { reconcileWithState } from '../../../src/actors/network-profiler/reconcile.js';
import type { PeerLink, Profile } from '../../../src/actors/network-profiler/links.js';

const profile: Profile = {
  interfaces: [{ name: 'lan0', ips: ['10.77.0.1'], type: 'ethernet' }],
  memory: { ramTotal: 8e9, ramAvailable: 4e9 },
};
const links: Record<string, PeerLink> = {
  'b|10.77.0.2': {
    sink: 'b',
    ip: '10.77.0.2',
    type: 'ethernet',
    port: 52515,
    rttMs: 0.4,
    bandwidthBps: 9e8,
    measuredAt: 1000,
  },
  'c|10.77.0.3': { sink: 'c', ip: '10.77.0.3', type: 'ethernet', port: 52515 },
};
const me = { nodeId: 'a', incarnation: 2, links, profile };
const node = (id: string, extra: Record<string, unknown> = {}) => ({ id, incarnation: id === 'a' ? 2 : 1, ...extra });
const types = (es: { type: string; sink?: string }[]) => es.map((e) => `${e.type}${e.sink ? ` ${e.sink}` : ''}`);

t.test('nothing to say when the state has our facts', async (t) => {
  const answer = {
    nodes: [node('a', { profile }), node('b'), node('c')],
    links: [
      { source: 'a', sink: 'b', ip: '10.77.0.2', bandwidthBps: 9e8, measuredAt: 1000 },
      { source: 'a', sink: 'c', ip: '10.77.0.3' },
    ],
  };
  t.same(reconcileWithState(answer, me), []);
});

t.test(
  'a state holding an older sample of our link gets the newer one; a newer one in the state is left',
  async (t) => {
    const withSample = (measuredAt: number) => ({
      nodes: [node('a', { profile }), node('b'), node('c')],
      links: [
        { source: 'a', sink: 'b', ip: '10.77.0.2', bandwidthBps: 4e8, rttMs: 2, measuredAt },
        { source: 'a', sink: 'c', ip: '10.77.0.3' },
      ],
    });
    const out = reconcileWithState(withSample(400), me);
    t.same(types(out), ['LinkMeasured b'], 'the lost confirming sample is sent again');
    t.match(out[0], { bandwidthBps: 9e8, rttMs: 0.4, measuredAt: 1000 });
    t.same(reconcileWithState(withSample(1000), me), [], 'the same sample: nothing');
    t.same(reconcileWithState(withSample(2000), me), [], 'a newer sample in the state: nothing (never rolled back)');
  },
);

t.test('a merged state without our profile and links: both are sent again, with the stored measurement', async (t) => {
  const answer = { nodes: [node('a'), node('b'), node('c')], links: [] };
  const out = reconcileWithState(answer, me);
  t.same(types(out), ['NodeProfileUpdated', 'LinkUp b', 'LinkMeasured b', 'LinkUp c']);
  t.match(out[0], { nodeId: 'a', incarnation: 2, interfaces: profile.interfaces });
  t.match(out[2], {
    source: 'a',
    sink: 'b',
    ip: '10.77.0.2',
    bandwidthBps: 9e8,
    rttMs: 0.4,
    measuredAt: 1000,
    sourceIncarnation: 2,
  });
});

t.test(
  'an unmeasured link in the state gets the measurement; a link of ours we no longer have goes down',
  async (t) => {
    const answer = {
      nodes: [node('a', { profile }), node('b'), node('c'), node('d')],
      links: [
        { source: 'a', sink: 'b', ip: '10.77.0.2' },
        { source: 'a', sink: 'c', ip: '10.77.0.3' },
        { source: 'a', sink: 'd', ip: '10.77.0.4' },
        { source: 'b', sink: 'a', ip: '10.77.0.1' },
      ],
    };
    t.same(
      types(reconcileWithState(answer, me)),
      ['LinkMeasured b', 'LinkDown d'],
      "other nodes' links are not ours to judge",
    );
  },
);

t.test(
  'no facts about unknown sinks, nor while the state holds another incarnation of us or not us at all',
  async (t) => {
    t.same(
      types(reconcileWithState({ nodes: [node('a', { profile })], links: [] }, me)),
      [],
      'sinks b and c unknown: nothing',
    );
    t.same(
      reconcileWithState({ nodes: [{ id: 'a', incarnation: 1 }, node('b')], links: [] }, me),
      [],
      'older incarnation in the state',
    );
    t.same(reconcileWithState({ nodes: [node('b')], links: [] }, me), [], 'not joined');
    t.same(reconcileWithState(null, me), [], 'garbage');
  },
);
