import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseNodeArgs, startNode } from '../../src/index.js';

t.test('an embedder starts a subset of the actors and queries them', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'torus-embed-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { config } = parseNodeArgs([
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--data-dir',
    dataDir,
    '--no-mdns',
    '--log-level',
    'error',
  ]);
  const node = await startNode(config, { actors: ['topology-keeper', 'placement-planner'] });
  t.teardown(() => node.shutdown());
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
  const token = node.credential.mode === 'secret' ? node.credential.apiToken : '';
  const res = await fetch(`http://127.0.0.1:${node.api.port}/v1/node`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(((await res.json()) as { role: string }).role, 'alone', 'no cluster actor: the node says so');
  await node.shutdown();
  t.equal(await node.closed, 0);
  t.equal(node.runtime.liveWorkers(), 0);
});
