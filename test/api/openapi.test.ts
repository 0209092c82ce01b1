import t from 'tap';
import { ERROR_STATUS } from '../../src/protocols/errors.js';
import { openApiPath } from '../../src/api/openapi.js';
import { apiRoutes } from '../../src/api/server.js';
import { getJson, startApi } from './fixtures/harness.js';

t.test('the served OpenAPI document lists every route the server answers, and nothing else', async (t) => {
  const { api } = await startApi(t);
  const { status, body } = await getJson(api.url, '/v1/openapi.json');
  t.equal(status, 200);
  t.equal(body.openapi, '3.1.0');
  t.equal(body.info.version, '0.1.0-test', 'version from the node');
  const documented = new Set(
    Object.entries(body.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    ),
  );
  const served = new Set(apiRoutes().map((r) => `${r.method} ${openApiPath(r.path)}`));
  for (const route of served) t.ok(documented.has(route), `documented: ${route}`);
  for (const op of documented) t.ok(served.has(op), `served: ${op}`);
  t.equal(api.routes.length, served.size, 'no duplicate routes');
});

t.test('every error code of the registry is in the Error schema; request schemas are the enforced ones', async (t) => {
  const { api } = await startApi(t);
  const { body } = await getJson(api.url, '/v1/openapi.json');
  t.same(
    [...body.components.schemas.Error.properties.error.properties.code.enum].sort(),
    Object.keys(ERROR_STATUS).sort(),
  );
  // The request's shape, beside the rule across its fields (`nodes` goes alone).
  const [create, pinnedAlone] = body.components.schemas.CreateInstanceRequest.allOf;
  t.ok(pinnedAlone.not, 'nodes with minNodes or requiredNodes is refused by the document too');
  t.equal(create.additionalProperties, false);
  t.same(create.required, ['workload']);
  const [branches, sized] = create.properties.workload.allOf;
  const [ring, exec] = branches.oneOf;
  t.same(ring.required, ['id'], 'the ring branch: kind may be left out');
  t.same(exec.required, ['kind', 'id', 'command'], 'the exec branch: kind exec and a command');
  t.same(
    sized.anyOf.map((s: { required: string[] }) => s.required),
    [['model'], ['memoryBytes', 'layers']],
    'the sizes: a model, or memoryBytes and layers',
  );
  t.notOk(ring.properties.command, 'exec-only fields are only in the exec branch');
  t.equal(exec.properties.id.pattern, ring.properties.id.pattern, 'one id definition');
  t.same(create.properties.sharding.enum, ['pipeline', 'tensor']);
  // Every $ref resolves.
  const refs = JSON.stringify(body).match(/#\/components\/schemas\/\w+/g) ?? [];
  for (const ref of new Set(refs)) t.ok(body.components.schemas[ref.split('/').at(-1)!], `resolves ${ref}`);
});

t.test('an instance request may set how its logs rotate (workload.logs), and the document says so', async (t) => {
  const { api } = await startApi(t);
  const text = JSON.stringify((await getJson(api.url, '/v1/openapi.json')).body);
  t.match(text, /"logs":\{[^}]*"maxFiles"/, 'workload.logs with maxFiles');
  t.match(text, /"maxFileBytes":\{[^}]*"minimum":1024/, 'and maxFileBytes, at least 1024');
});
