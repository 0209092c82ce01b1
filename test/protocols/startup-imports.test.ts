/**
 * What a worker thread loads when it imports a protocol module from the build (issue 16, start-up cost). Every
 * actor runs in its own worker, and each one importing TypeBox module by module (~220 files) cost ~250 ms of CPU
 * per thread and turned a node's 1.8 s start into 3.1 s. The build bundles TypeBox into one file
 * (scripts/bundle-typebox.mjs); this counts the modules a fresh worker actually loads, with a loader hook, so a
 * build that goes back to importing the package (or loses the bundle step) fails here. Not timed: the time is
 * benchmarks/startup's job.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compile, Type } from '../../src/protocols/schema-kit.js';
import { Kind } from '../../src/protocols/typebox.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

// Records the URL of every module loaded (in the hooks thread) and hands the list over when asked.
const HOOKS = `
let urls = [];
export async function initialize({ port }) {
  port.on('message', () => port.postMessage(urls));
  port.unref();
}
export async function load(url, context, next) { urls.push(url); return next(url, context); }
`;
// The worker registers the hooks, imports the module, and prints what was loaded.
const WORKER = `
import { register } from 'node:module';
import { MessageChannel, parentPort, workerData } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
register('data:text/javascript,' + encodeURIComponent(workerData.hooks), { data: { port: port2 }, transferList: [port2] });
await import(workerData.target);
port1.once('message', (urls) => { parentPort.postMessage(urls); port1.close(); });
port1.postMessage('list');
`;
const MAIN = `
import { Worker } from 'node:worker_threads';
const [hooks, worker, target] = JSON.parse(process.argv[1]);
const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(worker)), { workerData: { hooks, target } });
w.once('message', (urls) => { process.stdout.write(JSON.stringify(urls)); void w.terminate(); });
w.once('error', (e) => { console.error(e); process.exit(1); });
`;

/** The file: URLs a fresh worker thread loads to import `file` (relative to dist/). */
function modulesLoadedByWorker(file: string): string[] {
  const target = pathToFileURL(dist + file).href;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', MAIN, JSON.stringify([HOOKS, WORKER, target])], { encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) throw new Error(`worker import of ${file} failed (${String(run.status ?? run.signal)}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as string[]).filter((url) => url.startsWith('file:'));
}

t.test('a worker importing dist/protocols/mailbox.js loads a handful of modules, TypeBox as one bundle', async (t) => {
  if (!existsSync(dist + 'protocols/mailbox.js')) t.fail('no dist/protocols/mailbox.js: run `npm run build` first');
  const urls = modulesLoadedByWorker('protocols/mailbox.js');
  t.ok(urls.includes(target('protocols/mailbox.js')), 'the hook saw the module itself');
  t.same(urls.filter((u) => u.includes('/node_modules/@sinclair/')), [], 'nothing from the TypeBox package: it comes from the bundle');
  t.ok(urls.includes(target('protocols/typebox.js')), 'TypeBox from dist/protocols/typebox.js');
  t.ok(urls.length <= 8, `at most 8 modules (mailbox, schema-kit, the bundle, core errors), got ${urls.length}: ${urls.slice(0, 6).join(', ')}${urls.length > 6 ? ', …' : ''}`);
});

t.test('events, peer frames and runner frames also load TypeBox as the one bundle', async (t) => {
  for (const file of ['protocols/events.js', 'protocols/peer-frames.js', 'protocols/runner.js']) {
    const urls = modulesLoadedByWorker(file);
    t.same(urls.filter((u) => u.includes('/node_modules/@sinclair/')), [], `${file}: nothing from the TypeBox package`);
    t.ok(urls.length <= 30, `${file}: ${urls.length} modules`);
  }
});

t.test('the bundle is self-contained: it imports nothing', async (t) => {
  const bundle = readFileSync(dist + 'protocols/typebox.js', 'utf8');
  t.notMatch(bundle, /\bfrom\s*["']|\bimport\s*\(\s*["']/, 'no import statement left in dist/protocols/typebox.js');
  t.match(bundle, /^\/\/ @sinclair\/typebox/, 'it is the bundle, not tsc\'s re-export');
});

t.test('a check is compiled on first use, not when the module calls compile()', async (t) => {
  // TypeCompiler refuses a kind it does not know: compiling at compile() would throw here, at "module load".
  const unknownKind = Type.Unsafe<string>({ [Kind]: 'NotRegisteredAnywhere', type: 'string' });
  const codec = compile(unknownKind, 'frame', 'frame');
  t.equal(codec.schema, unknownKind, 'the codec holds the schema object itself');
  t.throws(() => codec.is('x'), /NotRegisteredAnywhere|unknown type/i, 'compiled (and refused) on the first check');
  // An ordinary codec still decodes and names the failing field after a lazy compile.
  const point = compile(Type.Object({ x: Type.Integer() }, { additionalProperties: false }), 'frame', 'frame');
  t.same(point.decode({ x: 1 }), { x: 1 });
  t.throws(() => point.decode({ x: 'a' }), { code: 'TORUS_PROTOCOL_INVALID', message: /frame\.x/ });
});

function target(file: string): string {
  return pathToFileURL(dist + file).href;
}
