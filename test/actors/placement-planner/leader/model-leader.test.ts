/**
 * The leader's side of a model workload: the command handler reads the model's record from its own state, checks
 * the workload against it again (a command that did not come through the API is held to the same rules), and the
 * real planner actor splits the pipeline by the record's bytes.
 */
import t from 'tap';
import { applyEvents } from '../../../../src/actors/topology-keeper/apply.js';
import { emptyState } from '../../../../src/actors/topology-keeper/state.js';
import { CommandHandler } from '../../../../src/actors/placement-planner/leader/command-handler.js';
import type { ClusterEvent, WorkloadSpec } from '../../../../src/protocols/events.js';
import { Runtime } from '../../../../src/runtime/runtime.js';
import { siblingModule } from '../../../../src/runtime/module-url.js';
import { indexed, joined, linkUp, profile } from '../../../fixtures/topology/events.js';
import { tinyModelRecord } from '../../../fixtures/placement/tiny-model-record.js';

const NODES = ['a', 'b', 'c', 'd'];
const ip = (n: string): string => `10.77.0.${NODES.indexOf(n) + 1}`;
const MODEL = '5a'.repeat(32);

t.test(
  'the leader places a model workload by its stage bytes and refuses one that contradicts the record',
  async (t) => {
    const events: ClusterEvent[] = [];
    for (const n of NODES) events.push(joined(n), profile(n, ip(n), 30));
    // a ring a-b-c-d and nothing across it
    for (let i = 0; i < 4; i++) {
      const [x, y] = [NODES[i] as string, NODES[(i + 1) % 4] as string];
      events.push(linkUp(x, y, ip(y)), linkUp(y, x, ip(x)));
    }
    events.push({
      type: 'ArtifactHeld',
      nodeId: 'a',
      artifactId: MODEL,
      name: 'llama',
      bytes: 116,
      chunks: 1,
      have: 1,
      model: tinyModelRecord(),
    });
    const state = applyEvents(emptyState, indexed(events, 1));
    const runtime = new Runtime();
    t.teardown(() => runtime.shutdown());
    await runtime.supervise({
      name: 'placement-planner',
      module: siblingModule(import.meta.url, '../../../../src/actors/placement-planner/worker'),
      options: {},
    });
    const handler = new CommandHandler(runtime);
    const workload: WorkloadSpec = { kind: 'ring', id: 'llama', model: MODEL, memoryBytes: 100, layers: 12 };

    const placed = await handler.handle({ type: 'PlaceInstance', workload, minNodes: 4 }, state);
    const created = placed.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>;
    t.same(
      created.instance.shards.map((s) => s.endLayer - s.startLayer),
      [1, 5, 5, 1],
      'embeddings + 1 block, 5, 5, 1 block + head: 25 bytes per stage on nodes of 30',
    );
    t.same(created.workload, workload, 'the event carries the workload with its model');

    await t.rejects(
      handler.handle({ type: 'PlaceInstance', workload: { ...workload, layers: 13 }, minNodes: 4 }, state),
      { code: 'TORUS_API_VALIDATION', message: /workload.layers: 13 contradicts model 5a5a5a5a5a5a's 12 layers/ },
    );
    await t.rejects(
      handler.handle({ type: 'PlaceInstance', workload: { ...workload, model: '6b'.repeat(32) }, minNodes: 4 }, state),
      { code: 'TORUS_ARTIFACT_UNKNOWN' },
    );
  },
);
