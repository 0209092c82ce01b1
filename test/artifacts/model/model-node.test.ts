/**
 * A real node (dist/main.js on loopback) and the real CLI: `artifacts add` of a model directory puts the model's
 * record in the replicated state (`GET /v1/artifacts/:id` → `model`); a malformed one is refused naming the file
 * and byte, and nothing is added (not to the store, not to the state).
 */
import t from 'tap';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';

const MAIN = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));

function startNode(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [MAIN, '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--no-mdns', '--insecure-open'],
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

t.test('artifacts add of a model directory on a live node: the record is in the state and the API', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'torus-model-node-'));
  const dataDir = join(root, 'data');
  const node = await startNode(dataDir);
  t.teardown(() => {
    node.child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });
  const api = `http://127.0.0.1:${node.port}`;
  const get = async (path: string) => {
    const r = await fetch(`${api}${path}`);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  await until('a leader', async () => ((await get('/v1/node')).body.role === 'leader' ? true : undefined));
  const made = makeModel({ out: join(root, 'tiny-llama'), bytes: 4 * 2 ** 20, layers: 4, shards: 2 });

  const add = await cli(['artifacts', 'add', join(root, 'tiny-llama'), '--api', api, '--data-dir', dataDir]);
  t.equal(add.code, 0, `add exits 0 (${add.stderr})`);
  const id = add.stdout.trim();
  t.match(id, /^[0-9a-f]{64}$/);
  t.match(add.stderr, new RegExp(`model LlamaForCausalLM: 4 layers, hidden size ${made.hiddenSize}, `));
  const view = await until('the model in GET /v1/artifacts/:id', async () => {
    const r = await get(`/v1/artifacts/${id}`);
    return r.status === 200 && r.body.model ? r.body : undefined;
  });
  const model = view.model as {
    architecture: string;
    layers: number;
    hiddenSize: number;
    dtype: string;
    files: { path: string }[];
    layerBytes: number[];
    tensors: { name: string; file: string; begin: number; end: number; layer: number | string }[];
  };
  t.match(model, { architecture: 'LlamaForCausalLM', layers: 4, hiddenSize: made.hiddenSize, dtype: 'BF16' });
  t.equal(model.tensors.length, made.tensors);
  t.same(
    model.files.map((f) => f.path),
    made.files,
  );
  t.match(
    model.tensors.find((x) => x.name === 'model.layers.2.mlp.up_proj.weight'),
    { layer: 2, file: /^model-0000[12]-of-00002\.safetensors$/ },
  );
  t.equal(model.layerBytes.length, 4);
  t.ok(
    model.layerBytes.every((b) => b === model.layerBytes[0]! && b > 0),
    'equal blocks, bytes per layer',
  );
  // the list stays as it was: no model records in it
  const list = (await get('/v1/artifacts')).body.artifacts as Record<string, unknown>[];
  t.equal(list.length, 1);
  t.notOk('model' in list[0]!);

  // a malformed model: refused with the file and byte; nothing added to the store or the state
  const bad = join(root, 'bad-llama');
  makeModel({ out: bad, bytes: 2 ** 20, layers: 2, shards: 1 });
  writeFileSync(join(bad, 'model.safetensors'), Buffer.from([232, 3, 0, 0, 0, 0, 0, 0, 123]));
  const before = readdirSync(join(dataDir, 'artifacts')).sort();
  const refused = await cli(['artifacts', 'add', bad, '--api', api, '--data-dir', dataDir]);
  t.not(refused.code, 0, 'add fails');
  t.match(refused.stderr, /model\.safetensors: byte 0: header length 1000 runs past the end of the file \(9 bytes\)/);
  t.same(readdirSync(join(dataDir, 'artifacts')).sort(), before, 'nothing in the store (no staging left either)');
  t.equal(((await get('/v1/artifacts')).body.artifacts as unknown[]).length, 1, 'nothing new in the state');
});
