// A restartable job (restart: on-failure) whose re-placement is refused ends `failed` with the reason, as torchrun
// exits when it cannot restart — it does not sit in `restarting` until some later NodeJoined. The real
// placement-planner actor plans on a state built from events; the leader's command handler turns the refusal into
// a final InstanceFailed; the appliers, the re-placement list and the API view agree.
import t from 'tap';
import { instanceView } from '../../src/api/views.js';
import { applyEvents } from '../../src/actors/topology-keeper/apply.js';
import { instancesToReplace } from '../../src/actors/topology-keeper/placement-state.js';
import { decodeSnapshot, encodeSnapshot } from '../../src/actors/topology-keeper/snapshot.js';
import { emptyState, type ClusterState } from '../../src/actors/topology-keeper/state.js';
import { CommandHandler } from '../../src/actors/placement-planner/leader/command-handler.js';
import type { ClusterEvent, WorkloadSpec } from '../../src/protocols/events.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { siblingModule } from '../../src/runtime/module-url.js';
import { indexed, joined, linkUp, profile } from '../fixtures/topology/events.js';

const NODES = ['a', 'b', 'c'];
const ip = (n: string): string => `10.77.0.${NODES.indexOf(n) + 1}`;
const workload = {
  kind: 'exec',
  id: 'job',
  memoryBytes: 100,
  layers: 6,
  command: '/bin/false',
  args: [],
  restart: { policy: 'on-failure', max: 2 },
} as WorkloadSpec;

/** The job part of the API view (typed loosely in InstanceView). */
const jobOf = (state: ClusterState) =>
  instanceView(state, 'job-1')?.job as { state: string; exitCode?: number; failedRank?: number } | undefined;

let index = 0;
function apply(state: ClusterState, events: readonly ClusterEvent[]): ClusterState {
  const out = applyEvents(state, indexed(events, index + 1));
  index += events.length;
  return out;
}

function cluster(): ClusterState {
  const events: ClusterEvent[] = [];
  for (const n of NODES)
    events.push(joined(n), { ...profile(n, ip(n)), runners: { allowExec: true, maxRunners: 8 } } as ClusterEvent);
  for (const s of NODES) for (const k of NODES) if (s !== k) events.push(linkUp(s, k, ip(k)));
  index = 0;
  return apply(emptyState, events);
}

t.test(
  'a restartable job whose re-placement is refused ends failed, with the reason and the failing rank',
  async (t) => {
    const runtime = new Runtime();
    t.teardown(() => runtime.shutdown());
    await runtime.supervise({
      name: 'placement-planner',
      module: siblingModule(import.meta.url, '../../src/actors/placement-planner/worker'),
      options: {},
    });
    const handler = new CommandHandler(runtime);
    let state = cluster();

    // Every node, at least three: a re-placement on fewer is refused.
    const placed = await handler.handle({ type: 'PlaceInstance', workload, minNodes: 3, instanceId: 'job-1' }, state);
    state = apply(state, placed.events);
    const nodes = state.instances['job-1']!.plan.nodes;
    state = apply(state, [
      {
        type: 'InstanceFailed',
        instanceId: 'job-1',
        reason: 'rank 1 exited with code 3',
        rank: 1,
        nodeId: nodes[1]!,
        exitCode: 3,
      },
    ]);
    t.equal(jobOf(state)?.state, 'restarting', 'a rank failed: the job waits for its restart');
    t.same(
      instancesToReplace(state).map((n) => n.instanceId),
      ['job-1'],
      'and is on the re-placement list',
    );

    // Before the restart, a node leaves: two remain, minNodes 3 cannot hold.
    state = apply(state, [{ type: 'NodeGone', nodeId: nodes[2]!, reason: 'test' }]);
    const refused = await handler.handle({ type: 'ReplaceInstance', instanceId: 'job-1' }, state);
    const failed = refused.events[0] as Extract<ClusterEvent, { type: 'InstanceFailed' }>;
    t.equal(failed?.type, 'InstanceFailed', 'the refusal is a failure event');
    t.equal(failed.final, true, 'marked final: no restart follows');
    state = apply(state, refused.events);

    const view = instanceView(state, 'job-1')!;
    t.equal(jobOf(state)?.state, 'failed', 'the job ends failed (it did not stay `restarting`)');
    t.match(
      view.reason,
      /cannot re-place \(rank 1 exited with code 3\)/,
      `the reason says why it does not restart: ${view.reason}`,
    );
    t.equal(jobOf(state)?.exitCode, 3, "the failing rank's exit code stays");
    t.equal(jobOf(state)?.failedRank, 1, 'and its rank');
    t.same(instancesToReplace(state), [], 'off the re-placement list');

    // The node comes back: the failed job stays failed (no surprise restart later).
    state = apply(state, [joined(nodes[2]!, 2)]);
    t.same(instancesToReplace(state), [], 'a NodeJoined does not bring it back');
    t.equal(jobOf(state)?.state, 'failed');

    // A late, non-final failure report does not rename the cause; a second final one changes nothing either.
    const before = state;
    state = apply(state, [
      { type: 'InstanceFailed', instanceId: 'job-1', reason: 'rank 0 stopped', rank: 0, exitCode: 143 },
      { type: 'InstanceFailed', instanceId: 'job-1', reason: 'again', final: true },
    ]);
    t.same(state.instances['job-1'], before.instances['job-1'], 'later failure reports change nothing');

    // The mark survives a snapshot (a node restarting from disk does not restart the job either).
    const restored = decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(state))));
    t.equal(jobOf(restored.state)?.state, 'failed', 'still failed after a snapshot round trip');
  },
);
