import t from 'tap';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { canonicalJson, stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/actors/topology-keeper/snapshot.js';
import { ValidationError } from '../../../src/protocols/errors.js';
import type { IndexedEvent } from '../../../src/protocols/events.js';
import { everyEvent, indexed } from '../../fixtures/topology/events.js';

/** The same value with every object's keys inserted in a (seeded) random order. */
function reorderKeys<T>(v: T, rand: () => number): T {
  if (Array.isArray(v)) return v.map((x) => reorderKeys(x, rand)) as T;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).sort(() => rand() - 0.5);
    return Object.fromEntries(keys.map((k) => [k, reorderKeys((v as Record<string, unknown>)[k], rand)])) as T;
  }
  return v;
}
const rng = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

// Keep the log before the final NodeGone/InstanceDeleted so the state is rich (links, instance, runners, tasks).
const log = indexed(everyEvent.slice(0, 15));

t.test('same events, keys inserted in other orders: byte-identical canonical state and digest', async (t) => {
  const a = applyEvents(emptyState, log);
  const ref = canonicalJson(a);
  for (let seed = 1; seed <= 10; seed++) {
    const b = applyEvents(emptyState, reorderKeys(log, rng(seed)) as IndexedEvent[]);
    t.equal(canonicalJson(b), ref, `seed ${seed}`);
    t.equal(stateDigest(b), stateDigest(a));
  }
  t.match(stateDigest(a), /^[0-9a-f]{64}$/);
  t.not(stateDigest(a), stateDigest(applyEvents(emptyState, log.slice(0, -1))), 'one event fewer, another digest');
});

t.test('canonicalJson: sorted keys, undefined dropped, arrays kept in order', async (t) => {
  t.equal(canonicalJson({ b: 1, a: [3, { d: undefined, c: 'x' }], e: null }), '{"a":[3,{"c":"x"}],"b":1,"e":null}');
  t.throws(() => canonicalJson({ x: NaN }));
});

t.test('snapshot round-trips through JSON and is re-validated', async (t) => {
  const state = applyEvents(emptyState, log);
  const snap = encodeSnapshot(state);
  const back = decodeSnapshot(JSON.parse(JSON.stringify(snap)));
  t.equal(stateDigest(back.state), snap.digest);
  t.same(back.state, state);
  t.equal(stateDigest(decodeSnapshot(encodeSnapshot(emptyState)).state), stateDigest(emptyState));
});

t.test('snapshot decode refuses tampering and broken invariants', async (t) => {
  const snap = JSON.parse(JSON.stringify(encodeSnapshot(applyEvents(emptyState, log))));
  const bad = (mutate: (s: any) => void, why: RegExp) => {
    const copy = JSON.parse(JSON.stringify(snap));
    mutate(copy);
    try {
      decodeSnapshot(copy);
      t.fail(`accepted: ${why.source}`);
    } catch (e) {
      t.ok(e instanceof ValidationError && why.test(e.message), `${why.source} (${(e as Error).message})`);
    }
  };
  bad((s) => {
    s.state.lastIndex = 99;
  }, /snapshot\.digest: does not match/);
  bad((s) => {
    s.state.nodes.a.extra = 1;
  }, /snapshot\.state\.nodes\.a\.extra: unknown field/);
  bad((s) => {
    s.state.nodes.x = s.state.nodes.a;
  }, /key does not match the id/);
  bad((s) => {
    s.state.links.push(s.state.links[0]);
  }, /not sorted or duplicated/);
  bad((s) => {
    s.state.links[0].sink = 'ghost';
  }, /not between two known nodes/);
  bad((s) => {
    s.state.tasks.t1.instanceId = 'ghost';
  }, /unknown instance/);
  bad((s) => {
    s.version = 2;
  }, /snapshot\.version/);
  bad((s) => {
    s.state.instances['inst-1'].runners = { zz: { status: 'Ready' } };
  }, /runner of a node outside the plan/);
});
