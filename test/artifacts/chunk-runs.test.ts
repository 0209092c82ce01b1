/**
 * Runs of consecutive chunks in one request (src/artifacts/peer-runs.ts, docs/artifacts.md "Runs of chunks"): the
 * route refuses hostile ranges with the registry's codes and keeps serving; a run is fetched and every chunk
 * verified; a corrupt chunk in the middle of a run is named and fetched elsewhere while the rest of the run is kept;
 * a cut run keeps what arrived whole and asks again for the rest; a holder without the route (an older node) is
 * asked chunk by chunk.
 */
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { artifactSigner } from '../../src/artifacts/proof.js';
import { peerPath } from '../../src/artifacts/peer-paths.js';
import { createPeerHandler, type PeerBackend } from '../../src/artifacts/peer-server.js';
import { PeerClient } from '../../src/artifacts/peer-client.js';
import { ArtifactWriter } from '../../src/artifacts/writer.js';
import { runTransfer } from '../../src/artifacts/transfer.js';
import type { ArtifactStore } from '../../src/artifacts/store.js';
import { sendError } from '../../src/http/http-io.js';
import { TorusError } from '../../src/protocols/errors.js';
import { addedSource, KEY, startNodes, until, type TestNode } from './fixtures.js';

const KiB = 1024;

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-runs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The real peer handler over a real store; `have` overrides which chunks it says it holds (a partial holder). */
function storeBackend(store: ArtifactStore, have = new Map<string, Uint8Array>()): PeerBackend {
  const held = (id: string): Uint8Array | undefined => {
    const m = store.manifest(id);
    return have.get(id) ?? (m ? new Uint8Array(m.refs.length).fill(1) : undefined);
  };
  return {
    dataKey: KEY,
    manifestBytes: (id) => store.manifest(id)?.bytes,
    haveSet: held,
    waitForChunk: async (id, i) => !!held(id)?.[i],
    readChunk: (id, i) => store.readChunk(id, i),
    releaseChunk: (b) => store.releaseChunk(b),
    chunkLengths: (id) => store.manifest(id)?.refs.map((r) => r.length),
    orderFetch: async () => {
      throw new TorusError('TORUS_API_NOT_FOUND', 'no fetch orders here');
    },
  };
}

/** A loopback HTTP server: `front` sees each request first (true: it answered); the rest goes to the peer handler. */
async function holder(
  t: { teardown(fn: () => void): void },
  backend: PeerBackend,
  front: (req: IncomingMessage, res: ServerResponse) => boolean = () => false,
): Promise<{ url: string; paths: string[] }> {
  const handler = createPeerHandler(backend);
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    if (front(req, res)) return;
    if (!handler(req, res)) sendError(res, new TorusError('TORUS_API_NOT_FOUND', 'not a peer route'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

const signedGet = (base: string, path: string, o: { method?: string; key?: string | null } = {}) =>
  fetch(base + path, {
    method: o.method ?? 'GET',
    headers: artifactSigner(o.key === undefined ? KEY : o.key, 'node-test')(o.method ?? 'GET', path),
  });

/** The [from, to) of a run request path, or undefined for any other path. */
function runOf(path: string): [number, number] | undefined {
  const m = /\/chunks\?from=(\d+)&to=(\d+)$/.exec(path);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** How often each chunk was asked for, singly or in runs. */
function asked(paths: readonly string[], n: number): number[] {
  const count = new Array<number>(n).fill(0);
  for (const p of paths) {
    const run = runOf(p);
    const single = /\/chunks\/(\d+)/.exec(p);
    if (run) for (let k = run[0]; k < run[1]; k++) count[k]!++;
    else if (single) count[Number(single[1])]!++;
  }
  return count;
}

t.test('the run route refuses hostile ranges with the registry codes, changes nothing, keeps serving', async (t) => {
  const dir = scratch(t);
  const C = 64 * KiB; // the smallest chunk size a manifest takes
  const data = randomBytes(300 * C);
  const { source, added } = await addedSource(dir, data, C);
  t.teardown(() => source.closeReaders());
  // A second artifact of big chunks, so a run can pass the byte bound below the count bound.
  writeFileSync(join(dir, 'big.bin'), Buffer.alloc(65 << 20));
  const big = await source.add(join(dir, 'big.bin'), { chunkSize: 1024 * KiB });
  const id = added.id;
  const partial = new Uint8Array(300).fill(1);
  partial[250] = 0;
  const { url } = await holder(t, storeBackend(source, new Map([[id, partial]])));
  const run = (q: string, artifact = id) => `/v1/peer/artifacts/${artifact}/chunks?${q}`;
  const cases: [string, string, number, string][] = [
    ['an empty run', run('from=3&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['a reversed run', run('from=5&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['past the last chunk', run('from=290&to=301'), 400, 'TORUS_API_VALIDATION'],
    ['more chunks than a run may have', run('from=0&to=257'), 400, 'TORUS_API_VALIDATION'],
    ['more bytes than a run may have', run('from=0&to=65', big.id), 400, 'TORUS_API_VALIDATION'],
    ['not a number', run('from=abc&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['negative', run('from=-1&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['too many digits', run('from=00000001&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['an exponent', run('from=1e2&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['no end', run('from=1'), 400, 'TORUS_API_VALIDATION'],
    ['two starts', run('from=1&from=2&to=3'), 400, 'TORUS_API_VALIDATION'],
    ['an unknown parameter', run('from=1&to=3&waitMs=100'), 400, 'TORUS_API_VALIDATION'],
    ['a chunk not held', run('from=248&to=252'), 503, 'TORUS_ARTIFACT_UNAVAILABLE'],
    ['an unknown artifact', run('from=0&to=2', '0'.repeat(64)), 404, 'TORUS_ARTIFACT_UNKNOWN'],
    ['not an id', '/v1/peer/artifacts/..%2Fx/chunks?from=0&to=2', 400, 'TORUS_API_VALIDATION'],
  ];
  for (const [name, path, status, code] of cases) {
    const res = await signedGet(url, path);
    const body = (await res.json()) as { error?: { code?: string; details?: { index?: number } } };
    t.equal(res.status, status, `${name}: HTTP ${res.status}`);
    t.equal(body.error?.code, code, `${name}: ${body.error?.code}`);
    if (name === 'a chunk not held') t.equal(body.error?.details?.index, 250, 'names the chunk it lacks');
  }
  t.equal((await signedGet(url, run('from=0&to=2'), { method: 'POST' })).status, 405, 'POST');
  t.equal((await signedGet(url, run('from=0&to=2'), { key: null })).status, 403, 'no proof');
  // Still serving, and what it serves is the chunks back to back.
  const ok = await signedGet(url, run('from=10&to=20'));
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('content-length'), String(10 * C));
  t.ok(Buffer.from(await ok.arrayBuffer()).equals(data.subarray(10 * C, 20 * C)), 'chunks 10..19');
  const last = await signedGet(url, run('from=299&to=300'));
  t.ok(Buffer.from(await last.arrayBuffer()).equals(data.subarray(299 * C)), 'the last chunk alone');
  const most = await signedGet(url, run('from=0&to=64', big.id));
  t.equal(most.headers.get('content-length'), String(64 << 20), 'a run of the byte bound is served');
  await most.arrayBuffer();
  t.ok(readFileSync(join(dir, 'src.bin')).equals(data), 'the source is untouched');
});

t.test('a run is fetched with one request, each chunk handed over whole and in order', async (t) => {
  const dir = scratch(t);
  const data = randomBytes(12 * 64 * KiB + 100);
  const { source, added, manifest, bytes, root } = await addedSource(dir, data, 64 * KiB);
  t.teardown(() => source.closeReaders());
  const { url, paths } = await holder(t, storeBackend(source));
  const client = new PeerClient(KEY, 'n9');
  t.teardown(() => client.close());
  const lengths = [64 * KiB, 64 * KiB, 64 * KiB, 100];
  const got: [number, Buffer][] = [];
  await client.run(url, added.id, 9, lengths, (k, d) => got.push([k, Buffer.from(d)]));
  t.same(
    got.map(([k]) => k),
    [9, 10, 11, 12],
  );
  t.ok(Buffer.concat(got.map(([, d]) => d)).equals(data.subarray(9 * 64 * KiB)), 'the bytes of chunks 9..12');
  t.same(paths, [peerPath.run(added.id, 9, 13)], 'one request');
  // A whole transfer through the scheduler: runs, every chunk verified by the writer, each asked once.
  const writer = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
  t.teardown(() => writer.close());
  paths.length = 0;
  const stats = await runTransfer({
    writer,
    client,
    sources: [{ nodeId: 'a', urls: [url], complete: true }],
    runBytes: 256 * KiB,
  });
  await writer.finish();
  t.equal(stats.chunks, 13);
  t.ok(readFileSync(join(root, added.id, 'files', 'src.bin')).equals(data), 'bit-identical');
  // runBytes is 4 chunks: three runs, and the lone last chunk on its own
  t.same(
    paths.map((p) => runOf(p) ?? p.replace(/.*\/chunks\//, '')),
    [[0, 4], [4, 8], [8, 12], '12'],
    'runs of at most runBytes',
  );
  t.same(asked(paths, 13), new Array(13).fill(1), 'each chunk asked once');
});

t.test(
  'a corrupt chunk in the middle of a run is named and fetched elsewhere; the rest of the run is kept',
  async (t) => {
    const {
      nodes: [a, b, c],
    } = await startNodes(t, 3);
    const dir = scratch(t);
    const CHUNK = 64 * KiB;
    const data = randomBytes(40 * CHUNK);
    const add = async (n: TestNode): Promise<string> => {
      const src = join(dir, n.id);
      mkdirSync(src);
      writeFileSync(join(src, 'w.bin'), data);
      const r = await n.service.store.add(join(src, 'w.bin'), { name: 'w', chunkSize: CHUNK });
      await n.service.announce(r.id);
      return r.id;
    };
    const id = await add(a!);
    await add(b!);
    // n0 sorts first among equal holders, so it is asked for the first run, which holds chunk 5: flip a byte of it.
    const fd = openSync(join(a!.dir, 'artifacts', id, 'files', 'w.bin'), 'r+');
    writeSync(fd, Buffer.from([data[5 * CHUNK + 7]! ^ 0xff]), 0, 1, 5 * CHUNK + 7);
    closeSync(fd);
    const pathsOf = (n: TestNode): string[] => {
      const list: string[] = [];
      n.server.prependListener('request', (req: IncomingMessage) => list.push(req.url ?? ''));
      return list;
    };
    const fromA = pathsOf(a!);
    const fromB = pathsOf(b!);
    await c!.service.fetch(id);
    const done = await until('c done', () => {
      const s = c!.service.transfer(id);
      return s && s.state !== 'running' && s;
    });
    t.equal(done.state, 'complete', JSON.stringify(done.error));
    t.ok(readFileSync(join(c!.dir, 'artifacts', id, 'files', 'w.bin')).equals(data), 'bit-identical');
    const firstRun = runOf(fromA.find((p) => p.includes('/chunks'))!);
    t.ok(firstRun && firstRun[0] <= 5 && firstRun[1] > 6, `n0 was asked for a run around chunk 5: ${firstRun}`);
    t.same(
      c!.service.transfers().corruption.map((r) => [r.nodeId, r.chunk]),
      [['n0', 5]],
      'the bad chunk and its holder named',
    );
    t.equal(asked(fromB, 40)[5], 1, 'chunk 5 fetched again from n1');
    const total = asked([...fromA, ...fromB], 40);
    t.same(
      total.map((x, k) => (k === 5 ? x - 1 : x)),
      new Array(40).fill(1),
      'every other chunk asked once: the verified chunks of the run around it were kept',
    );
    t.equal(done.bySource.n0!.chunks + done.bySource.n1!.chunks, 40);
  },
);

t.test('a cut run keeps the chunks that arrived whole and asks again for the rest', async (t) => {
  const dir = scratch(t);
  const CHUNK = 64 * KiB;
  const data = randomBytes(16 * CHUNK);
  const { source, added, manifest, bytes, root } = await addedSource(dir, data, CHUNK);
  t.teardown(() => source.closeReaders());
  let cut = false;
  const { url, paths } = await holder(t, storeBackend(source), (req, res) => {
    const run = runOf(req.url ?? '');
    if (!run || cut) return false;
    cut = true; // the first run: its head, two and a half chunks, then the connection closes
    res.writeHead(200, { 'content-length': (run[1] - run[0]) * CHUNK });
    res.write(data.subarray(run[0] * CHUNK, (run[0] + 2.5) * CHUNK), () => res.destroy());
    return true;
  });
  const client = new PeerClient(KEY, 'n9');
  t.teardown(() => client.close());
  const writer = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
  t.teardown(() => writer.close());
  const errors: string[] = [];
  const stats = await runTransfer({
    writer,
    client,
    sources: [{ nodeId: 'a', urls: [url], complete: true }],
    concurrency: 1,
    onSourceError: (_n, e) => errors.push(e.code),
  });
  await writer.finish();
  t.equal(stats.chunks, 16);
  t.ok(readFileSync(join(root, added.id, 'files', 'src.bin')).equals(data), 'bit-identical');
  t.same(runOf(paths[0]!), [0, 16], 'the first request: one run of everything');
  t.equal(runOf(paths[1]!)?.[0], 2, 'the next run starts after the two chunks that arrived whole');
  t.same(asked(paths, 16).slice(0, 2), [1, 1], 'chunks 0 and 1 not asked again');
  t.same(errors, ['TORUS_API_UNREACHABLE'], 'the cut reported as the source failing');
});

t.test('a holder without the run route (an older node) is asked chunk by chunk', async (t) => {
  const dir = scratch(t);
  const CHUNK = 64 * KiB;
  const data = randomBytes(16 * CHUNK);
  const { source, added, manifest, bytes, root } = await addedSource(dir, data, CHUNK);
  t.teardown(() => source.closeReaders());
  // What a node from before the run route answers: its route table has no `…/chunks` without an index (404
  // TORUS_API_NOT_FOUND); and a server that answers a plain 405 with no JSON.
  const oldAnswers: [string, (res: ServerResponse, path: string) => void][] = [
    [
      '404 TORUS_API_NOT_FOUND',
      (res, path) => sendError(res, new TorusError('TORUS_API_NOT_FOUND', `no peer route ${path}`)),
    ],
    [
      'a bare 405',
      (res) => {
        res.writeHead(405, { 'content-length': 18 });
        res.end('method not allowed');
      },
    ],
  ];
  for (const [name, answer] of oldAnswers) {
    const { url, paths } = await holder(t, storeBackend(source), (req, res) => {
      if (!runOf(req.url ?? '')) return false;
      answer(res, new URL(req.url!, 'http://x').pathname);
      return true;
    });
    const client = new PeerClient(KEY, 'n9');
    const root2 = join(root, name.replace(/\W/g, ''));
    const writer = ArtifactWriter.create(root2, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    try {
      const stats = await runTransfer({
        writer,
        client,
        sources: [{ nodeId: 'old', urls: [url], complete: true }],
        concurrency: 1,
      });
      await writer.finish();
      t.equal(stats.chunks, 16, name);
      t.equal(stats.failures, 0, `${name}: not counted as the holder failing`);
      t.ok(readFileSync(join(root2, added.id, 'files', 'src.bin')).equals(data), `${name}: bit-identical`);
      t.ok(runOf(paths[0]!), `${name}: a run was asked first`);
      t.equal(paths.filter((p) => runOf(p)).length, 1, `${name}: once`);
      t.same(asked(paths.slice(1), 16), new Array(16).fill(1), `${name}: then each chunk on its own`);
    } finally {
      writer.close();
      client.close();
    }
  }
});
