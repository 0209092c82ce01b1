import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wabtInit from 'wabt';
import { REDUCE_WASM_BASE64 } from '../../../src/native/kernels/reduce-wasm-bytes.js';

const WAT = 'src/native/kernels/reduce.wat';
const FEATURES = { simd: true, threads: true };

async function assemble(text: string): Promise<Buffer> {
  const wabt = await wabtInit();
  const module = wabt.parseWat('reduce.wat', text, FEATURES);
  try {
    module.resolveNames();
    // wabt's .d.ts omits the features argument its JS validate() takes (the script passes it the same way).
    (module.validate as (features?: typeof FEATURES) => void).call(module, FEATURES);
    return Buffer.from(module.toBinary({ log: false, write_debug_names: false, canonicalize_lebs: true }).buffer);
  } finally {
    module.destroy();
  }
}

const script = (...args: string[]) =>
  spawnSync(process.execPath, ['scripts/build-wasm.mjs', ...args], { encoding: 'utf8' });

t.test('the committed kernel bytes are exactly what wabt assembles from reduce.wat', async (t) => {
  const fresh = await assemble(await readFile(WAT, 'utf8'));
  const committed = Buffer.from(REDUCE_WASM_BASE64, 'base64');
  t.ok(
    fresh.equals(committed),
    `reduce-wasm-bytes.ts (${committed.length} B) = wabt(reduce.wat) (${fresh.length} B); if not, run npm run build:wasm`,
  );
  t.ok(WebAssembly.validate(committed), 'and they are a valid module here');
});

t.test('build-wasm --check passes on the tree and fails when the .wat changes', async (t) => {
  const ok = script('--check');
  t.equal(ok.status, 0, ok.stderr);
  const dir = await mkdtemp(join(tmpdir(), 'torus-wat-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const wat = await readFile(WAT, 'utf8');
  const changed = wat.replace('(i32.const 32)', '(i32.const 64)');
  t.not(changed, wat, 'the edit applies');
  await writeFile(join(dir, 'reduce.wat'), changed);
  const stale = script('--check', '--wat', join(dir, 'reduce.wat'));
  t.equal(stale.status, 1, 'a changed kernel is caught');
  t.match(stale.stderr, /does not match .*npm run build:wasm/);

  // Regenerating writes a module whose bytes are the changed kernel's.
  const out = join(dir, 'bytes.ts');
  t.equal(script('--wat', join(dir, 'reduce.wat'), '--out', out).status, 0);
  const base64 = [...(await readFile(out, 'utf8')).matchAll(/'([A-Za-z0-9+/=]+)'/g)].map((m) => m[1]).join('');
  t.ok(Buffer.from(base64, 'base64').equals(await assemble(changed)));
  t.equal(script('--check', '--wat', join(dir, 'reduce.wat'), '--out', out).status, 0, 'and then it checks clean');
});
