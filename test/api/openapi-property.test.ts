/**
 * The served document is the contract: requests generated from GET /v1/openapi.json against a real node
 * (startNode with every actor, 127.0.0.1 only, no mDNS), valid ones and ones broken by the document (a type
 * changed, a required field dropped, an unknown field added, a value past a limit). Whether a request is valid
 * is the document's say (checked with an OpenAPI 3.1 validator, ./fixtures/openapi-31.ts), not the server's:
 * valid → never 400 (only a state answer: 404, 409, 413, 429, ...); broken → a 4xx whose error names the field
 * as the caller sent it (`body workload.id`, `query rank`) in no internal words; every answer validates against
 * the document. Two validators judge each body and must agree: the OpenAPI 3.1 one and Ajv (JSON Schema
 * 2020-12, the dialect client generators and their users check with). Every operation takes part: one with a
 * body or query is generated here (or named in ELSEWHERE with the test that covers it), one with only a path
 * parameter gets generated ids, which the document calls any string. Seeded (TORUS_PROPERTY_SEED overrides the seed, TORUS_PROPERTY_RUNS the runs) so a failure
 * reproduces; fast-check prints the seed and the smallest failing request.
 */
import t from 'tap';
import fc from 'fast-check';
import { raw, type RawResponse } from './fixtures/harness.js';
import { startLoopbackNode } from '../fixtures/loopback-node.js';
import { documentChecks, type DocumentChecks } from './fixtures/openapi-31.js';
import { compiler } from './fixtures/openapi-check.js';
import {
  arbitraryOf,
  breakValue,
  BREAKS,
  resolve,
  type Generated,
  type Path,
  type Schema,
} from './fixtures/schema-arbitrary.js';

t.setTimeout(300_000);

const SEED = Number(process.env.TORUS_PROPERTY_SEED ?? 20261203);
const RUNS = Number(process.env.TORUS_PROPERTY_RUNS ?? 100);
const BODY_LIMIT = 64 * 1024;
const GHOST = 'ghost-node';
const LOGS_INSTANCE = 'property-logs';

/** An operation to exercise: its document entry and how to turn a generated value into a request. */
interface Target {
  readonly method: 'get' | 'post';
  readonly template: string;
  /** body: the JSON body's schema; query: the query parameters as one object schema. */
  readonly in: 'body' | 'query' | 'path';
  /** Keeps a valid request from starting real work (a benchmark) while leaving its shape to the generator. */
  readonly tame?: (value: any) => any;
  /** The id in the path (default PATH_IDS: an id no resource has). */
  readonly pathId?: string;
  /** Requests always sent first, besides the generated ones: shapes the document and a decoder once disagreed on. */
  readonly examples?: readonly unknown[];
}

const TARGETS: readonly Target[] = [
  { method: 'post', template: '/v1/placements/preview', in: 'body' },
  {
    method: 'post',
    template: '/v1/instances',
    in: 'body',
    examples: [
      { workload: { id: 'w x', memoryBytes: 1, layers: 1 } }, // an id the cluster's pattern refuses
      { workload: { id: 'w', memoryBytes: 1, layers: 1, args: ['--x'] } }, // exec's args on a ring workload
      { workload: { id: 'w', memoryBytes: 1, layers: 1, kind: 'exec', command: '/bin/true', env: { 'A-B': 'x' } } }, // an env name
      { workload: { id: 'w', memoryBytes: 1, layers: 1 }, requiredNodes: ['a b'] },
    ],
  },
  { method: 'post', template: '/v1/links/measure', in: 'body' },
  // Nodes that are not members: checked in full, answered per node (unknown node), no command runs.
  {
    method: 'post',
    template: '/v1/calibrations',
    in: 'body',
    tame: (v) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? { ...v, nodes: (Array.isArray(v.nodes) ? v.nodes : [0]).map((_: unknown, i: number) => `${GHOST}-${i}`) }
        : v,
  },
  // Nodes that are not members: the request is checked in full, then refused for state (404), no ring runs.
  {
    method: 'post',
    template: '/v1/bench/ring',
    in: 'body',
    tame: (v) => ({ ...v, nodes: (v.nodes ?? [0]).map((_: unknown, i: number) => `${GHOST}-${i}`) }),
  },
  // Only rule-valid bodies that name no member reach the leader: pinned nodes and required nodes the cluster does
  // not have, refused for state (404 / 409) before anything is placed. The rules themselves (nodes alone, an
  // activation size) are left to the generator, so bodies on both sides of them are sent.
  {
    method: 'post',
    template: '/v1/bench/pipeline',
    in: 'body',
    tame: (v) => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
      if (Array.isArray(v.nodes)) return { ...v, nodes: v.nodes.map((_: unknown, i: number) => `${GHOST}-${i}`) };
      return v.requiredNodes?.length ? v : { ...v, requiredNodes: [GHOST] };
    },
    examples: [
      { workload: { id: 'w', memoryBytes: 1, layers: 1 }, requiredNodes: [GHOST] }, // no activation size
      { workload: { id: 'w', memoryBytes: 1, layers: 1, hiddenSize: 8 }, nodes: [GHOST], minNodes: 1 },
      { workload: { id: 'w', memoryBytes: 1, layers: 1, hiddenSize: 8 }, nodes: [GHOST], requiredNodes: [] },
      { workload: { id: 'w', memoryBytes: 1, layers: 1, hiddenSize: 8, activationBytesPerToken: 16 }, nodes: [GHOST] },
    ],
  },
  { method: 'post', template: '/v1/artifacts/{id}/broadcast', in: 'body' },
  { method: 'post', template: '/v1/artifacts/{id}/announce', in: 'body' },
  // An artifact no node holds: refused for state (404) before any transfer starts.
  { method: 'post', template: '/v1/artifacts/{id}/fetch', in: 'body' },
  // A real instance (one rank): ranks past its world size are a missing resource (404), not a bad request.
  // `follow` would keep the answer open while the rank runs: it is read without it.
  {
    method: 'get',
    template: '/v1/instances/{id}/logs',
    in: 'query',
    pathId: LOGS_INSTANCE,
    tame: (v) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, follow: '0' } : v),
  },
];
/** Operations with inputs the property leaves to other tests, and why. */
const ELSEWHERE: Record<string, string> = {
  'get /v1/events': 'an SSE stream that stays open (test/api/events.test.ts)',
  'get /': 'the sign-in token (test/api/auth.test.ts)',
  'post /login': 'a form body (test/api/auth.test.ts)',
};
const PATH_IDS: Record<string, string> = { '{id}': 'ab'.repeat(32) };

t.test(
  'requests generated from the served document: valid → never 400, broken → 4xx naming the field, answers match the document',
  async (t) => {
    // One live instance at most: valid creates past it are a state refusal (429) the leader gives after its own decoder.
    const { url, auth } = await startLoopbackNode(t, ['--max-instances', '1', '--max-write-rate', '1000000']);
    if (!auth.authorization) throw new Error('a node started without --insecure-open has a credential');
    const doc = (await raw(url, 'GET', '/v1/openapi.json', undefined, auth)).json() as any;
    const placed = await raw(
      url,
      'POST',
      '/v1/instances',
      JSON.stringify({ workload: { id: 'logs', memoryBytes: 1, layers: 1 }, instanceId: LOGS_INSTANCE }),
      auth,
    );
    if (placed.status !== 201) throw new Error(`the instance whose logs are read: ${placed.status} ${placed.text}`);
    const checks = documentChecks(doc);
    t.teardown(() => checks.close());

    // Operations whose only input is a path parameter: generated ids (GET and DELETE of ids no resource has).
    const pathTargets: Target[] = [];
    t.test('every operation with inputs is exercised here or named elsewhere', async (t) => {
      for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(ops)) {
          const key = `${method} ${template}`;
          const params = (op.parameters ?? []) as { in: string }[];
          const takes = op.requestBody !== undefined || params.some((p) => p.in === 'query');
          if (!takes && params.some((p) => p.in === 'path')) {
            pathTargets.push({ method: method as Target['method'], template, in: 'path' });
            continue;
          }
          if (!takes) continue;
          t.ok(TARGETS.some((x) => `${x.method} ${x.template}` === key) || ELSEWHERE[key], `${key} is covered`);
        }
      }
      t.ok(pathTargets.length >= 6, `operations with only a path parameter: ${pathTargets.length}`);
    });

    const ajvSchema = compiler(doc);
    const tally = { valid: 0, broken: 0, refusedForState: 0 };
    for (const target of [...TARGETS, ...pathTargets]) {
      await t.test(`${target.method.toUpperCase()} ${target.template}`, async (t) => {
        const op = doc.paths[target.template][target.method];
        const schema =
          target.in === 'body'
            ? (op.requestBody.content['application/json'].schema as Schema)
            : target.in === 'path'
              ? (op.parameters.find((p: any) => p.in === 'path').schema as Schema)
              : queryObjectSchema(op.parameters);
        const openApiCheck =
          target.in === 'body'
            ? await checks.schemaAt([
                'paths',
                target.template,
                target.method,
                'requestBody',
                'content',
                'application/json',
                'schema',
              ])
            : undefined;
        const ajvCheck = target.in === 'query' ? undefined : ajvSchema(schema);
        // A body or path value is valid when both validators say so; they must agree.
        const accepts = (value: unknown): { valid: boolean } => {
          if (!ajvCheck) return { valid: queryValid(doc, schema, value) };
          const ajv = ajvCheck(value);
          const openApi = openApiCheck ? openApiCheck(value).valid : ajv;
          if (ajv !== openApi)
            throw new Error(
              `Ajv 2020 says ${ajv ? 'valid' : 'invalid'}, the OpenAPI 3.1 validator ${openApi ? 'valid' : 'invalid'}: ${JSON.stringify(value).slice(0, 300)}`,
            );
          return { valid: ajv };
        };
        const request = fc.record({
          generated: arbitraryOf(doc, schema),
          // A path parameter travels as text, and the document calls any text an id: nothing to break.
          breakBy:
            target.in === 'path'
              ? fc.constant(undefined)
              : fc.option(fc.constantFrom(...BREAKS), { nil: undefined, freq: 3 }),
          pick: fc.nat(),
        });
        await fc.assert(
          fc.asyncProperty(request, async ({ generated, breakBy, pick }) => {
            const sent = prepare(doc, target, generated, breakBy, pick);
            const res = await send(url, auth, target, sent.value);
            const where = `${target.method.toUpperCase()} ${target.template} ${sent.what} → ${res.status} ${res.text.slice(0, 300)}`;
            await answerMatchesDocument(checks, doc, target, res, where);
            const bodyBytes = target.in === 'body' ? Buffer.byteLength(JSON.stringify(sent.value)) : 0;
            const valid =
              target.in === 'query'
                ? queryValid(doc, schema, readBack(schema, sent.value))
                : accepts(JSON.parse(JSON.stringify(sent.value))).valid;
            if (bodyBytes > BODY_LIMIT) {
              if (res.status !== 413) throw new Error(`${where}: a body over ${BODY_LIMIT} bytes is 413`);
              return;
            }
            if (valid) {
              tally.valid++;
              // 503 is a state answer too (no leader, no node holding the artifact: retry later); other 5xx are not.
              if (res.status === 400 || (res.status >= 500 && res.status !== 503))
                throw new Error(`${where}: the document calls this request valid`);
              if (res.status >= 400) tally.refusedForState++;
              return;
            }
            tally.broken++;
            if (res.status !== 400)
              throw new Error(`${where}: the document calls this request invalid (${sent.what}), so 400`);
            const error = (res.json() as { error: { message: string; details?: { where?: string; path?: string } } })
              .error;
            if (/\bevent\b|command\.|request\./.test(error.message))
              throw new Error(`${where}: internal names in the message`);
            const reported = error.details?.path ?? '';
            if (
              error.details?.where !== target.in ||
              !error.message.startsWith(`${target.in} ${reported || '(root)'}:`)
            )
              throw new Error(`${where}: the error says where (${target.in})`);
            // A value that broke a rule across fields before it was broken at one node may be named by either.
            const baseValid = target.in === 'query' || accepts(JSON.parse(JSON.stringify(sent.base))).valid;
            if (sent.broken && baseValid && !related(reported, sent.broken, breakBy === 'drop'))
              throw new Error(
                `${where}: names ${reported || '(root)'}, not the broken ${render(sent.broken) || '(root)'}`,
              );
          }),
          {
            seed: SEED,
            numRuns: RUNS,
            examples: (target.examples ?? []).map(
              (value): [{ generated: Generated; breakBy: undefined; pick: number }] => [
                { generated: { value, nodes: [] }, breakBy: undefined, pick: 0 },
              ],
            ),
          },
        );
        t.pass(`${RUNS} generated requests`);
      });
    }
    t.ok(tally.valid > 50, `valid requests were sent (${tally.valid}; ${tally.refusedForState} refused for state)`);
    t.ok(tally.broken > 50, `broken requests were sent (${tally.broken})`);
  },
);

/** The request to send: the generated value, tamed, maybe broken at one node. */
function prepare(
  doc: any,
  target: Target,
  generated: Generated,
  breakBy: (typeof BREAKS)[number] | undefined,
  pick: number,
): { value: unknown; base: unknown; what: string; broken?: Path } {
  const tamed = target.tame ? { ...generated, value: target.tame(generated.value) } : generated;
  const whole = {
    value: tamed.value,
    base: tamed.value,
    what: `as generated ${JSON.stringify(tamed.value).slice(0, 200)}`,
  };
  if (breakBy === undefined) return whole;
  const broken = breakValue(doc, tamed, breakBy, pick);
  if (!broken) return whole;
  return {
    base: tamed.value,
    value: broken.value,
    broken: broken.path,
    what: `${broken.how} at ${render(broken.path) || '(root)'} ${JSON.stringify(broken.value).slice(0, 200)}`,
  };
}

async function send(url: string, auth: Record<string, string>, target: Target, value: unknown): Promise<RawResponse> {
  if (target.in === 'path') {
    const id = typeof value === 'string' ? value : JSON.stringify(value);
    const path = target.template.replace(/\{\w+\}/g, encodeURIComponent(id));
    return raw(url, target.method.toUpperCase(), path, undefined, auth);
  }
  const path = target.template.replace(/\{\w+\}/g, (p) => target.pathId ?? PATH_IDS[p] ?? 'x');
  if (target.in === 'body') return raw(url, target.method.toUpperCase(), path, JSON.stringify(value), auth);
  return raw(url, target.method.toUpperCase(), `${path}?${queryString(value)}`, undefined, auth);
}

/** The answer's status and media type are documented for the operation, and its JSON body matches (OpenAPI 3.1). */
async function answerMatchesDocument(
  checks: DocumentChecks,
  doc: any,
  target: Target,
  res: RawResponse,
  where: string,
): Promise<void> {
  const documented = doc.paths[target.template][target.method].responses[String(res.status)];
  if (!documented) throw new Error(`${where}: status ${res.status} is not documented`);
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  if (!documented.content?.[type])
    throw new Error(`${where}: content type ${type} is not documented for ${res.status}`);
  if (type !== 'application/json') return;
  const check = await checks.schemaAt([
    'paths',
    target.template,
    target.method,
    'responses',
    String(res.status),
    'content',
    'application/json',
    'schema',
  ]);
  const output = check(res.json()) as { valid: boolean; errors?: unknown };
  if (!output.valid)
    throw new Error(`${where}: the answer does not match the document: ${JSON.stringify(output.errors).slice(0, 500)}`);
}

/** The query parameters as one object schema (none required in torus; extra parameters are ignored by HTTP custom). */
function queryObjectSchema(parameters: readonly any[]): Schema {
  const query = parameters.filter((p) => p.in === 'query');
  return {
    type: 'object',
    properties: Object.fromEntries(query.map((p) => [p.name, p.schema])),
    required: query.filter((p) => p.required).map((p) => p.name),
  };
}
/** Query values travel as text: how a client serialises the generated object. */
function queryString(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return `value=${encodeURIComponent(JSON.stringify(value))}`;
  return Object.entries(value)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&');
}
/** The sent query string as the document's parameter styles read it (form style: integers from their digits). */
function readBack(schema: Schema, value: unknown): unknown {
  const params = new URLSearchParams(queryString(value));
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties as Record<string, Schema>)) {
    const text = params.get(name);
    if (text !== null) out[name] = s.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
  }
  return out;
}
/** A query object is valid when each parameter's value meets its own schema (a small check: enum, integer bounds). */
function queryValid(doc: any, schema: Schema, value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.entries(value).every(([name, v]) => {
    const s = schema.properties[name] ? resolve(doc, schema.properties[name]) : undefined;
    if (!s) return true;
    if (s.enum) return s.enum.includes(v);
    if (s.type === 'integer')
      return (
        Number.isInteger(v) &&
        (s.minimum === undefined || (v as number) >= s.minimum) &&
        (s.maximum === undefined || (v as number) <= s.maximum)
      );
    if (s.type === 'string') return typeof v === 'string';
    return true;
  });
}

/** `['workload', 'env', 'A-B']` → `workload.env["A-B"]`, `['nodes', 0]` → `nodes[0]`: how the caller wrote it. */
function render(path: Path): string {
  return path.reduce<string>(
    (out, key) =>
      typeof key === 'number'
        ? `${out}[${key}]`
        : /^[A-Za-z_$][\w$]*$/.test(key)
          ? out
            ? `${out}.${key}`
            : key
          : `${out}[${JSON.stringify(key)}]`,
    '',
  );
}
/**
 * The error names the broken field, or the object or list holding it (a dropped `kind` moves a workload to the
 * other branch, whose first complaint is a sibling field; an array past its length is named as the array). A
 * dropped field of a union with no discriminant (`{nodes} | {instance}`) may be named by another branch's field.
 */
function related(reported: string, broken: Path, dropped: boolean): boolean {
  const under = (inner: string, outer: string): boolean =>
    inner === outer || (outer === '' ? false : inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`));
  const exact = render(broken);
  const parent = render(broken.slice(0, -1));
  const sibling = (broken.length > 1 || dropped) && (parent === '' ? !/[.[]/.test(reported) : under(reported, parent));
  return under(reported, exact) || under(exact, reported) || sibling;
}
