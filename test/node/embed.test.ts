import t from 'tap';
import { startLoopbackNode } from '../fixtures/loopback-node.js';

t.test('an embedder starts a subset of the actors and queries them', async (t) => {
  const { node, url, auth } = await startLoopbackNode(t, [], { actors: ['topology-keeper', 'placement-planner'] });
  t.same(node.runtime.actors(), ['topology-keeper', 'placement-planner']);
  const state = await node.runtime.request<{ lastIndex: number; digest: string }>('topology-keeper', { type: 'state' });
  t.equal(state.lastIndex, 0);
  t.match(state.digest, /^[0-9a-f]{64}$/);
  const preview = await node.runtime.request<{ previews: unknown[] }>(
    'placement-planner',
    {
      type: 'preview',
      request: { workload: { id: 'w', memoryBytes: 1, layers: 2 }, sharding: 'pipeline', backend: 'ring' },
    },
    { timeoutMs: 30_000 },
  );
  t.ok(Array.isArray(preview.previews), 'the planner answers on the (empty) live state');
  const res = await fetch(`${url}/v1/node`, { headers: auth });
  t.equal(((await res.json()) as { role: string }).role, 'alone', 'no cluster actor: the node says so');
  await node.shutdown();
  t.equal(await node.closed, 0);
  t.equal(node.runtime.liveWorkers(), 0);
});
