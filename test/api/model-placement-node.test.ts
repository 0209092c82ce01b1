/**
 * A real node (dist/main.js on loopback) and the real CLI: a model directory written by makeModel() and added with
 * `artifacts add` is placed by its id alone (POST /v1/placements/preview, POST /v1/instances, `torus place
 * --model`, `torus run --model`): the node fills in the model's sizes, so the instance's workload carries them and
 * the model. Bad references are refused with nothing placed: a field that contradicts the record 400 (naming
 * both), an id no node holds 404, an artifact that is not a model 409.
 */
import t from 'tap';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeModel } from '../../benchmarks/model-fixture/make-model.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
t.setTimeout(240_000);

function startNode(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [MAIN, '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--no-mdns', '--insecure-open', '--allow-exec'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start; stderr: ${err}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on [^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code}; stderr: ${err}`));
    });
  });
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Answer {
  status: number;
  body: Record<string, any>;
}

t.test('a model placed by its id on a live node; bad references refused with nothing placed', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'torus-model-place-'));
  const dataDir = join(root, 'data');
  const node = await startNode(dataDir);
  t.teardown(() => {
    node.child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });
  const api = `http://127.0.0.1:${node.port}`;
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const r = await fetch(`${api}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const instances = async (): Promise<unknown[]> => (await call('GET', '/v1/instances')).body.instances as unknown[];
  await until('a leader', async () => ((await call('GET', '/v1/node')).body.role === 'leader' ? true : undefined));

  const made = makeModel({ out: join(root, 'tiny-llama'), bytes: 4 * 2 ** 20, layers: 4, shards: 2 });
  const add = await cli(['artifacts', 'add', join(root, 'tiny-llama'), '--api', api, '--data-dir', dataDir]);
  t.equal(add.code, 0, `add exits 0 (${add.stderr})`);
  const id = add.stdout.trim();
  const view = await until('the model in the state', async () => {
    const r = await call('GET', `/v1/artifacts/${id}`);
    return r.status === 200 && r.body.model ? r.body.model : undefined;
  });
  const weights =
    (view.layerBytes as number[]).reduce((s, b) => s + b, 0) +
    Object.values(view.otherBytes as Record<string, number>).reduce((s, b) => s + b, 0);
  t.ok(weights > 0 && weights <= made.bytes, `the weights: ${weights} bytes`);
  const id12 = id.slice(0, 12);

  // A preview from the id alone: the same as the sizes given by hand, with the stages weighed by bytes.
  const byModel = await call('POST', '/v1/placements/preview', { workload: { id: 'm', model: id } });
  t.equal(byModel.status, 200, JSON.stringify(byModel.body).slice(0, 300));
  const single = (byModel.body.previews as any[]).find((p) => p.plan && p.nodeCount === 1);
  t.ok(single, 'a one-node plan');
  t.same(
    single.plan.instance.shards.map((s: any) => [s.startLayer, s.endLayer]),
    [[0, 4]],
  );
  t.match(
    single.plan.explanation.chosen.why.join('\n'),
    new RegExp(`model stages by bytes: \\S+ layers 0-3 \\(.*\\b${weights} bytes\\)`),
  );
  const byHand = await call('POST', '/v1/placements/preview', {
    workload: { id: 'm', memoryBytes: weights, layers: 4, hiddenSize: made.hiddenSize, kvHeads: view.kvHeads },
  });
  t.same(
    (byHand.body.previews as any[]).map((p) => p.plan?.instance.shards ?? p.refusal.message),
    (byModel.body.previews as any[]).map((p) => p.plan?.instance.shards ?? p.refusal.message),
    'the same options and shards as the hand-given sizes',
  );

  // Bad references: refused, and nothing placed.
  const contradicted = await call('POST', '/v1/instances', { workload: { id: 'm', model: id, layers: 32 } });
  t.equal(contradicted.status, 400);
  t.equal(contradicted.body.error?.code, 'TORUS_API_VALIDATION');
  t.match(contradicted.body.error?.message, `workload.layers: 32 contradicts model ${id12}'s 4 layers`);
  const previewContradicted = await call('POST', '/v1/placements/preview', {
    workload: { id: 'm', model: id, hiddenSize: made.hiddenSize + 1 },
  });
  t.equal(previewContradicted.status, 400);
  t.match(
    previewContradicted.body.error?.message,
    `workload.hiddenSize: ${made.hiddenSize + 1} contradicts model ${id12}'s ${made.hiddenSize} hidden size`,
  );
  const unknown = await call('POST', '/v1/instances', { workload: { id: 'm', model: '0'.repeat(64) } });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error?.code, 'TORUS_ARTIFACT_UNKNOWN');
  writeFileSync(join(root, 'data.bin'), 'not a model');
  const plain = (
    await cli(['artifacts', 'add', join(root, 'data.bin'), '--api', api, '--data-dir', dataDir])
  ).stdout.trim();
  await until('the plain artifact in the state', async () =>
    (await call('GET', `/v1/artifacts/${plain}`)).status === 200 ? true : undefined,
  );
  const notModel = await call('POST', '/v1/instances', { workload: { id: 'm', model: plain } });
  t.equal(notModel.status, 409);
  t.equal(notModel.body.error?.code, 'TORUS_ARTIFACT_NOT_MODEL');
  t.match(notModel.body.error?.message, `artifact ${plain} (data.bin) is not a model`);
  const neither = await call('POST', '/v1/instances', { workload: { id: 'm' } });
  t.equal(neither.status, 400, 'no model and no sizes');
  t.match(neither.body.error?.message, /needs model, or memoryBytes and layers/);
  t.same(await instances(), [], 'nothing placed');

  // torus place --model: the instance's workload carries the model and the sizes the node filled in.
  const placed = await cli(['place', '--model', id, '--api', api, '--json']);
  t.equal(placed.code, 0, placed.stderr + placed.stdout);
  const instance = JSON.parse(placed.stdout) as Record<string, any>;
  t.match(instance.workload, {
    id: `model-${id12}`,
    model: id,
    memoryBytes: weights,
    layers: 4,
    hiddenSize: made.hiddenSize,
    kvHeads: view.kvHeads,
  });
  t.equal((await call('DELETE', `/v1/instances/${instance.id}`)).status, 200);

  // torus run --model: the job runs, and its workload names the model.
  const run = await cli([
    'run',
    '--model',
    id,
    '--instance-id',
    'model-job',
    '--api',
    api,
    '--',
    process.execPath,
    '-e',
    'console.log("ran")',
  ]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /\[rank 0 \S+\] ran/);
  const job = await call('GET', '/v1/instances/model-job');
  t.match(job.body.workload, { kind: 'exec', model: id, layers: 4, memoryBytes: weights });
});
