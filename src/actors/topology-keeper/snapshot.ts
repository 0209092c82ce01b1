/**
 * Whole-state snapshots for catch-up (a new or restarted node installs one, then applies the log's tail).
 * `decodeSnapshot` checks every field against the snapshot's schema (./snapshot-schema.ts), then the state's
 * invariants, and the digest, so a corrupt or hostile snapshot is refused with a ValidationError instead of
 * poisoning the replica. The decoded state is a fresh canonical copy; its digest is the one `apply` would give.
 */
import { ValidationError } from '../../protocols/errors.js';
import { checkModelRecord } from '../../protocols/model-record.js';
import { checkArtifactStage } from '../../protocols/artifact-events.js';
import { checkPlanRules } from '../../protocols/instance-plan.js';
import { canonical, compile, type Shape } from '../../protocols/schema-kit.js';
import { withWorkloadDefaults } from '../../protocols/workload-spec.js';
import { boundedJson, guarded } from '../../protocols/bounded-json.js';
import { ClusterStateSchema, SNAPSHOT_VERSION, StateSnapshotSchema } from './snapshot-schema.js';
import { compareLinks, type ArtifactRecord, type ClusterState, type InstanceRecord, type TaskRecord } from './state.js';
import { stateDigest } from './digest.js';

export { SNAPSHOT_VERSION, StateSnapshotSchema } from './snapshot-schema.js';

export interface StateSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  readonly digest: string;
  readonly state: ClusterState;
}

export function encodeSnapshot(state: ClusterState): StateSnapshot {
  return { version: SNAPSHOT_VERSION, digest: stateDigest(state), state };
}

const W = 'event';
const fail = (path: string, why: string): never => {
  throw new ValidationError(W, path, why);
};
const stateCodec = compile(ClusterStateSchema, W, 'state');
const snapshotCodec = compile(StateSnapshotSchema, W, 'snapshot');

/** Each record's key is its id (`apply` keys them so; a snapshot keyed otherwise would read differently). */
function keyedById<T>(records: Readonly<Record<string, T>>, id: (x: T) => string, p: string): void {
  for (const [k, x] of Object.entries(records)) if (id(x) !== k) fail(`${p}.${k}`, 'key does not match the id');
}

/** The invariants apply maintains, on a state the schema checked: the rules a schema cannot say. */
function stateRules(checked: Shape<typeof ClusterStateSchema>, p: string): ClusterState {
  const s = canonical(checked, W, p);
  keyedById(s.nodes, (n) => n.id, `${p}.nodes`);
  s.links.forEach((l, i) => {
    if (!Object.hasOwn(s.nodes, l.source) || !Object.hasOwn(s.nodes, l.sink) || l.source === l.sink)
      fail(`${p}.links[${i}]`, 'not between two known nodes');
    if (i > 0 && compareLinks(s.links[i - 1]!, l) >= 0) fail(`${p}.links[${i}]`, 'links not sorted or duplicated');
  });
  const instances: Record<string, InstanceRecord> = {};
  for (const [k, rec] of Object.entries(s.instances)) {
    const q = `${p}.instances.${k}`;
    const plan = checkPlanRules(rec.plan, `${q}.plan`);
    for (const node of Object.keys(rec.runners))
      if (!plan.nodes.includes(node)) fail(`${q}.runners.${node}`, 'runner of a node outside the plan');
    instances[k] = { ...rec, workload: withWorkloadDefaults(rec.workload) }; // `__proto__` keys were refused by canonical()
  }
  keyedById(instances, (x) => x.plan.id, `${p}.instances`);
  const tasks: Record<string, TaskRecord> = {};
  for (const [k, t] of Object.entries(s.tasks)) {
    const q = `${p}.tasks.${k}`;
    if (!Object.hasOwn(s.instances, t.instanceId)) fail(`${q}.instanceId`, 'unknown instance');
    const bounded = {
      ...t,
      ...(t.params !== undefined ? { params: boundedJson(W, t.params, `${q}.params`) } : {}),
      ...(t.result !== undefined ? { result: boundedJson(W, t.result, `${q}.result`) } : {}),
    };
    tasks[k] = bounded;
  }
  keyedById(tasks, (x) => x.id, `${p}.tasks`);
  if (s.artifacts) artifactRules(s.artifacts, s.nodes, `${p}.artifacts`);
  return { ...s, instances, tasks };
}

function artifactRules(
  artifacts: Readonly<Record<string, ArtifactRecord>>,
  nodes: ClusterState['nodes'],
  p: string,
): void {
  if (Object.keys(artifacts).length === 0) fail(p, 'empty (absent when no node holds an artifact)');
  for (const [id, a] of Object.entries(artifacts)) {
    const q = `${p}.${id}.holders`;
    if (Object.keys(a.holders).length === 0) fail(q, 'an artifact without holders is removed');
    if (a.model) checkModelRecord(a.model, `${p}.${id}.model`);
    for (const [node, h] of Object.entries(a.holders)) {
      if (!Object.hasOwn(nodes, node)) fail(`${q}.${node}`, 'holder is not a known node');
      if (h.have > a.chunks) fail(`${q}.${node}.have`, `out of range [0, ${a.chunks}]`);
      if (h.stage) {
        checkArtifactStage(h.stage, a.chunks, h.have, `${q}.${node}.stage`);
        if (a.model && h.stage.toLayer > a.model.layers)
          fail(`${q}.${node}.stage.toLayer`, `past the model's ${a.model.layers} layers`);
      }
    }
  }
}

/** Validates a state: its schema, then the invariants apply maintains (record keys = ids, links sorted, unique, between known nodes). */
export function decodeState(v: unknown, p = 'state'): ClusterState {
  return guarded(W, () => stateRules(stateCodec.decode(v, p), p));
}

/** For a snapshot a larger schema already checked (the keeper's `install-snapshot` message embeds it): rules and digest. */
export function finishSnapshot(checked: Shape<typeof StateSnapshotSchema>, p: string): StateSnapshot {
  const state = stateRules(checked.state, `${p}.state`);
  if (stateDigest(state) !== checked.digest) fail(`${p}.digest`, 'does not match the state');
  return { version: SNAPSHOT_VERSION, digest: checked.digest, state };
}

export function decodeSnapshot(v: unknown, p = 'snapshot'): StateSnapshot {
  return guarded(W, () => finishSnapshot(snapshotCodec.decode(v, p), p));
}
