import t from 'tap';
import { readFileSync, writeFileSync, openSync, writeSync, closeSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { artifactSigner } from '../../src/artifacts/proof.js';
import { peerPath } from '../../src/artifacts/peer-paths.js';
import { KEY, startNodes, until, type TestNode } from './fixtures.js';

const KiB = 1024;
const CHUNK = 64 * KiB;

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-art-src-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Adds `data` as file `w.bin` to node `n` from its own copy (so corrupting one store never touches another). */
async function addTo(n: TestNode, dir: string, data: Buffer): Promise<string> {
  const src = join(dir, `${n.id}-src`);
  writeFileSync(join(dir, `${n.id}-w.bin`), data);
  const { mkdirSync, renameSync } = await import('node:fs');
  mkdirSync(src, { recursive: true });
  renameSync(join(dir, `${n.id}-w.bin`), join(src, 'w.bin'));
  const added = await n.service.store.add(join(src, 'w.bin'), { name: 'w', chunkSize: CHUNK });
  await n.service.announce(added.id);
  return added.id;
}

const storedFile = (n: TestNode, id: string) => join(n.dir, 'artifacts', id, 'files', 'w.bin');

t.test('a node fetches from every holder; every chunk verified; the state shows the new holder complete', async (t) => {
  const {
    shared,
    nodes: [a, b, c],
  } = await startNodes(t, 3);
  const dir = scratch(t);
  const data = randomBytes(40 * CHUNK + 123);
  const id = await addTo(a!, dir, data);
  t.equal(await addTo(b!, dir, data), id, 'same content, same id');
  await c!.service.fetch(id);
  const done = await until('c complete', () => {
    const s = c!.service.transfer(id);
    return s && s.state !== 'running' && s;
  });
  t.equal(done.state, 'complete', JSON.stringify(done.error));
  t.ok(readFileSync(storedFile(c!, id)).equals(data), 'bit-identical');
  t.ok(
    (done.bySource.n0?.chunks ?? 0) > 0 && (done.bySource.n1?.chunks ?? 0) > 0,
    `both holders served chunks: ${JSON.stringify(done.bySource)}`,
  );
  t.equal((done.bySource.n0?.chunks ?? 0) + (done.bySource.n1?.chunks ?? 0), 41, 'each chunk fetched once');
  await until('state lists c complete', () => shared.state.artifacts?.[id]?.holders.n2?.have === 41);
  t.same(Object.keys(shared.state.artifacts![id]!.holders).sort(), ['n0', 'n1', 'n2']);
});

t.test('a peer serving corrupt chunks is detected and reported; the chunks come from another holder', async (t) => {
  const {
    nodes: [a, b, c],
  } = await startNodes(t, 3);
  const dir = scratch(t);
  const data = randomBytes(20 * CHUNK);
  const id = await addTo(a!, dir, data);
  await addTo(b!, dir, data);
  // Flip one byte in every chunk of b's stored copy: b now serves only bad chunks.
  const fd = openSync(storedFile(b!, id), 'r+');
  for (let i = 0; i < 20; i++) writeSync(fd, Buffer.from([data[i * CHUNK + 5]! ^ 0x5a]), 0, 1, i * CHUNK + 5);
  closeSync(fd);
  await c!.service.fetch(id);
  const done = await until('c done', () => {
    const s = c!.service.transfer(id);
    return s && s.state !== 'running' && s;
  });
  t.equal(done.state, 'complete');
  t.ok(readFileSync(storedFile(c!, id)).equals(data), 'bit-identical despite the corrupt peer');
  t.ok((done.corrupt.n1 ?? 0) > 0, `b reported: ${JSON.stringify(done.corrupt)}`);
  t.equal(done.bySource.n1, undefined, 'no chunk from b was kept');
  const reports = c!.service.transfers().corruption;
  t.ok(reports.length > 0 && reports.every((r) => r.nodeId === 'n1' && r.artifactId === id));
});

t.test('chain: a node fetches from an upstream that is itself still receiving, chunk by chunk', async (t) => {
  const {
    nodes: [a, b, c],
  } = await startNodes(t, 3);
  const dir = scratch(t);
  const data = randomBytes(30 * CHUNK);
  const id = await addTo(a!, dir, data);
  const answer = await c!.service.broadcast(id, ['n1', 'n2']);
  t.same(answer.chain, ['n0', 'n1', 'n2']);
  const [sb, sc] = await until('both done', () => {
    const x = b!.service.transfer(id);
    const y = c!.service.transfer(id);
    return x && y && x.state !== 'running' && y.state !== 'running' && ([x, y] as const);
  });
  t.equal(sb.state, 'complete');
  t.equal(sc.state, 'complete');
  t.same(
    Object.keys(sc.bySource),
    ['n1'],
    'the downstream node took every chunk from its upstream, none from the head',
  );
  t.equal(sc.upstream, 'n1');
  t.ok(readFileSync(storedFile(c!, id)).equals(data));
});

t.test(
  'peer routes: refused without the cluster key; ids and indices validated; nothing outside the store',
  async (t) => {
    const {
      nodes: [a],
    } = await startNodes(t, 1);
    const dir = scratch(t);
    const id = await addTo(a!, dir, randomBytes(3 * CHUNK));
    const get = (path: string, key: string | null = KEY) =>
      fetch(a!.url + path, { headers: artifactSigner(key, 'node-test')('GET', path) });
    t.equal((await get(peerPath.manifest(id))).status, 200);
    t.equal((await get(peerPath.manifest(id), null)).status, 403, 'no proof');
    t.equal((await get(peerPath.manifest(id), 'cd'.repeat(32))).status, 403, 'wrong key');
    t.equal((await get(peerPath.chunk(id, 3))).status, 400, 'index out of range');
    t.equal((await get(`/v1/peer/artifacts/${id}/chunks/-1`)).status, 400);
    t.equal((await get('/v1/peer/artifacts/..%2F..%2Fetc/manifest')).status, 400, 'not an id');
    t.equal((await get(`/v1/peer/artifacts/${'0'.repeat(64)}/manifest`)).status, 404, 'unknown artifact');
    const chunk = await get(peerPath.chunk(id, 1));
    t.equal(chunk.status, 200);
    t.equal((await chunk.arrayBuffer()).byteLength, CHUNK);
    const once = artifactSigner(KEY, 'node-test')('GET', peerPath.manifest(id));
    t.equal((await fetch(a!.url + peerPath.manifest(id), { headers: once })).status, 200, 'a proof once');
    t.equal(
      (await fetch(a!.url + peerPath.manifest(id), { headers: once })).status,
      403,
      'the same proof again (a replay): refused',
    );
  },
);

t.test('a holder reached at two measured addresses sends over both at once, the faster one more', async (t) => {
  const {
    shared,
    nodes: [a, , c],
  } = await startNodes(t, 3);
  const dir = scratch(t);
  const data = randomBytes(64 * CHUNK);
  const id = await addTo(a!, dir, data);
  // a also answers at 127.0.0.2 (a second port of the same node, e.g. a cable beside the LAN), same API port.
  const port = Number(new URL(a!.url).port);
  // chunks asked of each address, one at a time or as runs (…/chunks?from=F&to=T)
  const requests = { '127.0.0.1': 0, '127.0.0.2': 0 };
  const chunksAsked = (url = ''): number => {
    const run = /\/chunks\?from=(\d+)&to=(\d+)/.exec(url);
    return run ? Number(run[2]) - Number(run[1]) : url.includes('/chunks/') ? 1 : 0;
  };
  a!.server.prependListener('request', (req) => {
    requests['127.0.0.1'] += chunksAsked(req.url);
  });
  const second = createServer((req, res) => {
    requests['127.0.0.2'] += chunksAsked(req.url);
    a!.service.peerHandler(req, res);
  });
  await new Promise<void>((r) => second.listen(port, '127.0.0.2', r));
  t.teardown(() => {
    second.closeAllConnections();
    second.close();
  });
  const link = (ip: string, bandwidthBps: number) => ({
    source: 'n2',
    sink: 'n0',
    ip,
    type: 'ethernet' as const,
    rttMs: 0.1,
    bandwidthBps,
    measuredAt: Date.now(),
  });
  shared.state = { ...shared.state, links: [link('127.0.0.1', 1e9), link('127.0.0.2', 4e9)] };
  await c!.service.fetch(id);
  const done = await until('c done', () => {
    const s = c!.service.transfer(id);
    return s && s.state !== 'running' && s;
  });
  t.equal(done.state, 'complete', JSON.stringify(done.error));
  t.ok(readFileSync(storedFile(c!, id)).equals(data), 'bit-identical');
  t.ok(requests['127.0.0.1'] > 0 && requests['127.0.0.2'] > 0, `both addresses served: ${JSON.stringify(requests)}`);
  t.ok(requests['127.0.0.2'] > requests['127.0.0.1'], 'the faster address served more');
  t.equal(requests['127.0.0.1'] + requests['127.0.0.2'], 64, 'each chunk once');
});
