import t from 'tap';
import { raw, sendJson, startApi } from './fixtures/harness.js';

const workload = { id: 'w', memoryBytes: 1024, layers: 4 };

const cases: [string, string, unknown, string, RegExp][] = [
  ['/v1/instances', 'missing workload', {}, 'workload', /is required/],
  [
    '/v1/instances',
    'wrong type',
    { workload: { ...workload, memoryBytes: '1 GiB' } },
    'workload.memoryBytes',
    /expected a finite number, got string/,
  ],
  ['/v1/instances', 'not an integer', { workload: { ...workload, layers: 2.5 } }, 'workload.layers', /integer/],
  ['/v1/instances', 'below minimum', { workload: { ...workload, layers: 0 } }, 'workload.layers', />= 1/],
  [
    '/v1/instances',
    'unknown field',
    { workload: { ...workload, colour: 'red' } },
    'workload.colour',
    /not a known field/,
  ],
  ['/v1/instances', 'enum', { workload, sharding: 'diagonal' }, 'sharding', /one of pipeline, tensor/],
  [
    '/v1/instances',
    'array item',
    { workload, requiredNodes: ['a', 7] },
    'requiredNodes[1]',
    /expected a string, got number/,
  ],
  ['/v1/instances', 'root not an object', [1, 2], '', /expected an object, got array/],
  ['/v1/instances', 'null root', null, '', /got null/],
  [
    '/v1/instances',
    'env values',
    { workload: { ...workload, kind: 'exec', command: 'x', env: { A_B: 1 } } },
    'workload.env.A_B',
    /expected a string/,
  ],
  [
    '/v1/instances',
    'env names',
    { workload: { ...workload, kind: 'exec', command: 'x', env: { 'A-B': 'x' } } },
    'workload.env["A-B"]',
    /does not match/,
  ],
  [
    '/v1/instances',
    'exec fields on a ring workload',
    { workload: { ...workload, args: ['x'] } },
    'workload.args',
    /is not a known field/,
  ],
  ['/v1/instances', 'workload ids', { workload: { ...workload, id: ' w' } }, 'workload.id', /does not match/],
  [
    '/v1/placements/preview',
    'preview unknown top field',
    { workload, instanceId: 'x' },
    'instanceId',
    /not a known field/,
  ],
  [
    '/v1/placements/preview',
    'preview missing id',
    { workload: { memoryBytes: 1, layers: 1 } },
    'workload.id',
    /is required/,
  ],
  [
    '/v1/placements/preview',
    'bytes per layer zero',
    { workload: { ...workload, bytesPerLayer: 0 } },
    'workload.bytesPerLayer',
    />= 1/,
  ],
  [
    '/v1/placements/preview',
    'activation bytes not an integer',
    { workload: { ...workload, activationBytesPerToken: 2.5 } },
    'workload.activationBytesPerToken',
    /integer/,
  ],
  [
    '/v1/instances',
    'FLOPs per token a string',
    { workload: { ...workload, flopsPerTokenPerLayer: 'lots' } },
    'workload.flopsPerTokenPerLayer',
    /expected a finite number/,
  ],
  [
    '/v1/instances',
    'tokens per step zero',
    { workload: { ...workload, tokensPerStep: 0 } },
    'workload.tokensPerStep',
    />= 1/,
  ],
  [
    '/v1/placements/preview',
    'objective',
    { workload, objective: 'fastest' },
    'objective',
    /one of latency, throughput/,
  ],
  [
    '/v1/bench/pipeline',
    'pipeline bench steps',
    { workload: { ...workload, hiddenSize: 64 }, steps: 0 },
    'steps',
    />= 1/,
  ],
  [
    '/v1/bench/pipeline',
    'pipeline bench empty option',
    { workload: { ...workload, hiddenSize: 64 }, nodes: [] },
    'nodes',
    /at least 1 items/,
  ],
  [
    '/v1/bench/pipeline',
    'pipeline bench option with a node twice',
    { workload: { ...workload, hiddenSize: 64 }, nodes: ['a', 'a'] },
    'nodes[1]',
    /"a" is given twice \(first at \[0\]\)/,
  ],
  [
    '/v1/instances',
    'pinned instance with a node twice',
    { workload, nodes: ['a', 'b', 'a'] },
    'nodes[2]',
    /"a" is given twice \(first at \[0\]\)/,
  ],
  [
    '/v1/instances',
    'pinned instance beside requiredNodes',
    { workload, nodes: ['a'], requiredNodes: ['a'] },
    'nodes',
    /cannot be combined with minNodes or requiredNodes/,
  ],
  [
    '/v1/placements/preview',
    'pinned preview beside minNodes',
    { workload, nodes: ['a'], minNodes: 1 },
    'nodes',
    /cannot be combined with minNodes or requiredNodes/,
  ],
  [
    '/v1/bench/pipeline',
    'pipeline bench option beside minNodes',
    { workload: { ...workload, hiddenSize: 64 }, nodes: ['a', 'b'], minNodes: 2 },
    'nodes',
    /cannot be combined with minNodes/,
  ],
  ['/v1/bench/ring', 'bench empty node list', { nodes: [] }, 'nodes', /at least 1 items/],
  ['/v1/bench/ring', 'bench op', { ops: ['all-to-all'] }, 'ops[0]', /one of/],
  ['/v1/bench/ring', 'bench __proto__ key', JSON.parse('{"__proto__": {"x": 1}}'), '__proto__', /not a known field/],
];

t.test('every field is checked and the error names it', async (t) => {
  const { api } = await startApi(t);
  for (const [path, name, body, field, why] of cases) {
    const res = await raw(api.url, 'POST', path, JSON.stringify(body));
    t.equal(res.status, 400, `${name}: 400`);
    const json = res.json() as { error: { code: string; message: string; details: { where: string; path: string } } };
    t.equal(json.error.code, 'TORUS_API_VALIDATION', name);
    t.same(json.error.details, { where: 'body', path: field }, `${name}: names ${field || '(root)'}`);
    t.match(json.error.message, why, `${name}: says why`);
  }
});

t.test('malformed JSON is a 400; wrong media type 415; empty body reads as {}', async (t) => {
  const { api } = await startApi(t);
  const bad = await raw(api.url, 'POST', '/v1/instances', '{"workload": ');
  t.equal(bad.status, 400);
  t.match(bad.json(), {
    error: { code: 'TORUS_API_VALIDATION', message: /invalid JSON/, details: { where: 'body', path: '' } },
  });
  const text = await raw(api.url, 'POST', '/v1/instances', JSON.stringify({ workload }), {
    'content-type': 'text/plain',
  });
  t.equal(text.status, 415);
  t.match(text.json(), { error: { code: 'TORUS_API_UNSUPPORTED_MEDIA_TYPE' } });
  const empty = await raw(api.url, 'POST', '/v1/bench/ring', '', { 'content-type': 'application/json' });
  t.equal(empty.status, 202, 'bench with every option defaulted');
  const emptyCreate = await raw(api.url, 'POST', '/v1/instances', '');
  t.equal(emptyCreate.status, 400);
  t.match(emptyCreate.json(), { error: { details: { path: 'workload' } } });
});

t.test('bodies over the limit are 413, declared or streamed, and the server stays up', async (t) => {
  const { api } = await startApi(t, { bodyLimitBytes: 4096 });
  const big = JSON.stringify({ workload: { ...workload, id: 'x'.repeat(10_000) } });
  const declared = await raw(api.url, 'POST', '/v1/instances', big);
  t.equal(declared.status, 413);
  t.match(declared.json(), { error: { code: 'TORUS_API_BODY_TOO_LARGE', details: { limit: 4096 } } });
  t.equal(declared.headers.connection, 'close');
  const chunked = await raw(api.url, 'POST', '/v1/instances', Buffer.alloc(1_000_000, 0x20), {
    'transfer-encoding': 'chunked',
  });
  t.equal(chunked.status, 413, 'a chunked body without Content-Length is cut at the limit');
  const ok = await sendJson(api.url, 'POST', '/v1/instances', { workload });
  t.equal(ok.status, 201, 'still serving');
});

t.test('malformed percent-encoding in a path parameter is a 400', async (t) => {
  const { api } = await startApi(t);
  const res = await raw(api.url, 'GET', '/v1/instances/%E0%A4%A');
  t.equal(res.status, 400);
  t.match(res.json(), { error: { details: { where: 'params', path: 'id' } } });
});
