/**
 * The served document passes Redocly's recommended lint (`redocly lint` from @redocly/cli 2, a devDependency, so
 * present after `npm ci`): the check a client generator's user runs first. No error and no warning: `servers`,
 * a license, an `operationId` on every operation (unique), a success answer on every operation. One problem is
 * ignored, by its place and on purpose: POST /login is the dashboard's browser form, whose success is 303 See
 * Other to the dashboard (with the session cookie), so it has no 2XX answer.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getJson, startApi } from './fixtures/harness.js';

const IGNORED = `torus.openapi.json:
  operation-2xx-response:
    - '#/paths/~1login/post/responses'
`;

function redoclyCli(): string {
  const pkg = createRequire(import.meta.url).resolve('@redocly/cli/package.json');
  const bin = (JSON.parse(readFileSync(pkg, 'utf8')) as { bin: { redocly: string } }).bin.redocly;
  return join(dirname(pkg), bin);
}

t.test("Redocly's recommended lint passes on the served document, with no warning", async (t) => {
  const { api } = await startApi(t);
  const { status, body } = await getJson(api.url, '/v1/openapi.json');
  t.equal(status, 200);
  const dir = mkdtempSync(join(tmpdir(), 'torus-redocly-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'torus.openapi.json'), JSON.stringify(body));
  writeFileSync(join(dir, '.redocly.lint-ignore.yaml'), IGNORED);
  const run = spawnSync(process.execPath, [redoclyCli(), 'lint', 'torus.openapi.json', '--format', 'json'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  t.equal(run.status, 0, `redocly lint exits 0 (stderr: ${run.stderr.slice(-500)})`);
  const report = JSON.parse(run.stdout) as {
    totals: { errors: number; warnings: number; ignored: number };
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
  t.same(problems, [], 'no problems');
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 1 }, 'only the sign-in form, ignored by its place');
});

t.test('every operation has its own readable operationId', async (t) => {
  const { api } = await startApi(t);
  const { body } = await getJson(api.url, '/v1/openapi.json');
  const ids = Object.values(body.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((ops) =>
    Object.values(ops).map((op) => op.operationId),
  );
  for (const id of ids) t.match(id, /^[a-z]+(?:[A-Z][a-z]+)+$/, `${id}: a verb and a noun, camelCase`);
  t.equal(new Set(ids).size, ids.length, 'unique');
  const ops = body.paths['/v1/instances'];
  t.same([ops.post.operationId, ops.get.operationId], ['createInstance', 'listInstances']);
});
