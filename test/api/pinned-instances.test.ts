/**
 * Pinned placements through the API of a real node (startNode with every actor, 127.0.0.1, no mDNS):
 * `nodes` on POST /v1/instances and POST /v1/placements/preview. Unknown nodes are a 404 naming them, a node
 * given twice a 400 naming nodes[i], a set that cannot hold the workload a 409 with the planner's reason; none
 * of them places anything. A set that fits is placed there and says it is pinned. Every answer matches the
 * document.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseNodeArgs, startNode } from '../../src/index.js';
import { raw } from './fixtures/harness.js';
import { checkAnswer, compiler, json, workload } from './fixtures/openapi-check.js';

t.setTimeout(300_000);

t.test(
  'pinned nodes on a real node: 404, 400, 409 with nothing placed; 201 pinned',
  { timeout: 280_000 },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'torus-pinned-'));
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
    const node = await startNode(config);
    t.teardown(() => node.shutdown());
    if (node.credential.mode !== 'secret') throw new Error('a node started without --insecure-open has a credential');
    const url = `http://127.0.0.1:${node.api.port}`;
    const auth = { authorization: `Bearer ${node.credential.apiToken}` };
    const self = node.identity.nodeId;
    const doc = (await raw(url, 'GET', '/v1/openapi.json', undefined, auth)).json() as any;
    const compile = compiler(doc);
    let available = 0;
    for (let i = 0; i < 100 && available === 0; i++) {
      const topology = (await raw(url, 'GET', '/v1/topology', undefined, auth)).json() as {
        nodes: Array<{ memory?: { ramAvailable: number } }>;
      };
      available = topology.nodes[0]?.memory?.ramAvailable ?? 0;
      if (available === 0) await new Promise((r) => setTimeout(r, 200));
    }
    t.ok(available > 0, 'the node reported its memory');
    const call = async (method: string, template: string, path: string, body?: unknown) => {
      const res = await raw(url, method, path, body === undefined ? undefined : json(body), auth);
      checkAnswer(t, doc, compile, method, template, res, `${method} ${path} → ${res.status}`);
      return res;
    };
    const instances = async () =>
      ((await call('GET', '/v1/instances', '/v1/instances')).json() as { instances: { id: string }[] }).instances;

    const unknown = await call('POST', '/v1/instances', '/v1/instances', {
      workload,
      nodes: [self, 'ghost', 'ghost-2'],
    });
    t.equal(unknown.status, 404, unknown.text);
    t.match(unknown.json(), {
      error: { code: 'TORUS_NODE_UNKNOWN', message: /ghost, ghost-2/, details: { unknown: ['ghost', 'ghost-2'] } },
    });

    const twice = await call('POST', '/v1/instances', '/v1/instances', { workload, nodes: [self, self] });
    t.equal(twice.status, 400, twice.text);
    t.match(twice.json(), {
      error: { code: 'TORUS_API_VALIDATION', details: { where: 'body', path: 'nodes[1]' }, message: /is given twice/ },
    });

    const big = { ...workload, memoryBytes: available * 2 };
    const refused = await call('POST', '/v1/instances', '/v1/instances', { workload: big, nodes: [self] });
    t.equal(refused.status, 409, refused.text);
    t.match(refused.json(), {
      error: {
        code: 'TORUS_PLACEMENT_REFUSED',
        message: new RegExp(`^The pinned nodes ${self} cannot hold w: not enough memory`),
        details: { kind: 'memory' },
      },
    });
    t.same(await instances(), [], 'no refusal placed anything');

    const preview = await call('POST', '/v1/placements/preview', '/v1/placements/preview', { workload, nodes: [self] });
    t.equal(preview.status, 200, preview.text);
    const previews = (preview.json() as { previews: { nodeCount: number; plan?: { instance: { nodes: string[] } } }[] })
      .previews;
    t.same(
      previews.map((p) => [p.nodeCount, p.plan?.instance.nodes ?? 'refused']),
      [
        [1, [self]],
        [1, [self]],
        [1, 'refused'],
        [1, 'refused'],
      ],
      'every option on the pinned node (tensor: the workload does not support it)',
    );
    const ghostPreview = await call('POST', '/v1/placements/preview', '/v1/placements/preview', {
      workload,
      nodes: ['ghost'],
    });
    t.equal(ghostPreview.status, 404, ghostPreview.text);

    const placed = await call('POST', '/v1/instances', '/v1/instances', { workload, nodes: [self], instanceId: 'pin' });
    t.equal(placed.status, 201, placed.text);
    t.match(placed.json(), { id: 'pin', nodes: [self], pinned: true });
    const id = encodeURIComponent('pin');
    t.match((await call('GET', '/v1/instances/{id}', `/v1/instances/${id}`)).json(), { pinned: true });
    t.equal((await call('DELETE', '/v1/instances/{id}', `/v1/instances/${id}`)).status, 200);
  },
);
