/**
 * The receive path's direct I/O and its helpers: page-aligned shared buffers (O_DIRECT takes them, a misaligned
 * view is refused), chunks written past the page cache (fincore shows it), read back the same way, hashed on the
 * piscina pool, kept in memory for a chain's downstream, and a transfer that fetches while it writes.
 */
import t from 'tap';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { alignedBuffer, isAligned, O_DIRECT } from '../../src/native/aligned-memory.js';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { ArtifactWriter } from '../../src/artifacts/writer.js';
import { RecentChunks } from '../../src/artifacts/recent-chunks.js';
import { inlineHasher, poolHasher } from '../../src/artifacts/chunk-hasher.js';
import { runTransfer } from '../../src/artifacts/transfer.js';
import { ChunkBufferPool } from '../../src/artifacts/chunk-buffers.js';
import type { PeerClient } from '../../src/artifacts/peer-client.js';
import { sha256Hex } from '../../src/artifacts/ids.js';
import { addedSource } from './fixtures.js';
import { CpuPool } from '../../src/runtime/cpu-pool.js';
import { partRuns, skipOrFail } from '../fixtures/skip-or-fail.js';

const KiB = 1024;
const ALIGNED_JS = fileURLToPath(new URL('../../dist/native/aligned-memory.js', import.meta.url));

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-direct-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Whether the scratch filesystem takes O_DIRECT at all (tmpfs on older kernels does not): the reason to skip, or false. */
function noDirect(): string | false {
  if (O_DIRECT === undefined) return `no O_DIRECT on ${process.platform}`;
  const dir = mkdtempSync(join(tmpdir(), 'torus-direct-probe-'));
  try {
    closeSync(openSync(join(dir, 'probe'), constants.O_WRONLY | constants.O_CREAT | O_DIRECT));
    return false;
  } catch {
    return `no O_DIRECT on the filesystem of ${tmpdir()}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const skipDirect = noDirect();

const FINCORE = ['/usr/bin/fincore', '/bin/fincore'].find((p) => existsSync(p));
/** Bytes of `file` in the page cache (util-linux fincore). */
const cachedBytes = (file: string): number =>
  Number(execFileSync(FINCORE!, ['--bytes', '--noheadings', '--output', 'RES', file], { encoding: 'utf8' }).trim());

t.test(
  'aligned buffers: page-aligned (O_DIRECT takes them, a view one byte in is refused) and shared',
  { skip: skipDirect },
  async (t) => {
    const dir = scratch(t);
    const buf = alignedBuffer(64 * KiB);
    t.ok(isAligned(buf));
    t.ok(buf.buffer instanceof SharedArrayBuffer, 'a worker can hash it where it lies');
    buf.fill(7);
    const fd = openSync(join(dir, 'f'), constants.O_WRONLY | constants.O_CREAT | O_DIRECT!);
    t.teardown(() => closeSync(fd));
    t.equal(writeSync(fd, buf, 0, buf.length, 0), buf.length, 'O_DIRECT write from an aligned buffer');
    const second = alignedBuffer(8 * KiB);
    t.equal(
      writeSync(fd, second, 0, second.length, 64 * KiB),
      second.length,
      'the next buffer of the slab is aligned too',
    );
    const misaligned = Buffer.allocUnsafeSlow(64 * KiB + 1).subarray(1);
    t.throws(
      () => writeSync(fd, misaligned, 0, 64 * KiB, 0),
      { code: 'EINVAL' },
      'the kernel refuses a misaligned buffer: the test can tell',
    );
    t.notOk(isAligned(misaligned));
    t.notOk(isAligned(buf.subarray(1)), 'a view of an aligned buffer is not known to be aligned');
    const big = alignedBuffer(20 * 1024 * KiB);
    t.equal(
      writeSync(fd, big, 0, 4096, 0),
      4096,
      'a buffer bigger than a quarter slab has a memory of its own, aligned',
    );
  },
);

t.test(
  'writer: aligned chunks go to disk past the page cache, the last one through it; bytes identical; direct reads match',
  { skip: skipDirect },
  async (t) => {
    const dir = scratch(t);
    const data = randomBytes(4 * 64 * KiB + 8 * KiB + 17);
    const { source, added, manifest, bytes, root } = await addedSource(dir, data, 64 * KiB);
    const w = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    for (let i = 0; i < 4; i++) await w.write(i, await source.readChunk(added.id, i)); // pooled: aligned
    await w.write(4, await source.readChunk(added.id, 4)); // 8 KiB + 17: not a multiple of 4 KiB
    t.same(w.writes, { direct: 4, cached: 1 });
    const file = join(root, added.id, 'files', 'src.bin');
    if (partRuns(t, 'the page-cache check', FINCORE ? undefined : 'fincore not found (Debian package util-linux)'))
      t.ok(cachedBytes(file) <= 16 * KiB, `only the last chunk's pages are cached (${cachedBytes(file)} bytes)`);
    await w.finish();
    t.ok(readFileSync(file).equals(data), 'bit-identical');

    const dest = new ArtifactStore(root);
    for (let i = 0; i < 5; i++) {
      const direct = await dest.readChunk(added.id, i, { direct: true });
      const cached = await dest.readChunk(added.id, i);
      t.ok(
        direct.equals(data.subarray(i * 64 * KiB, Math.min(data.length, (i + 1) * 64 * KiB))) && direct.equals(cached),
        `chunk ${i} read back the same both ways`,
      );
      dest.releaseChunk(direct);
      dest.releaseChunk(cached);
    }
    dest.closeReaders();

    // A copy (not from the pool) is not known to be aligned: it goes through the cache, still verified.
    const w2root = join(dir, 'c');
    mkdirSync(w2root);
    const w2 = ArtifactWriter.create(w2root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    t.teardown(() => w2.close());
    await w2.write(0, Buffer.from(await source.readChunk(added.id, 0)));
    t.same(w2.writes, { direct: 0, cached: 1 });
    source.closeReaders();
  },
);

t.test(
  'hashing on the piscina pool: shared chunks hashed by a pool thread, others inline; bad task input refused',
  async (t) => {
    const pool = new CpuPool(1);
    t.teardown(() => pool.close());
    let asked = 0;
    const hash = poolHasher(async (task, input) => {
      asked++;
      return pool.run(task, input);
    });
    const buf = alignedBuffer(256 * KiB);
    buf.set(randomBytes(buf.length));
    t.equal(await hash(buf), sha256Hex(buf));
    t.equal(await hash(buf.subarray(1000, 5000)), sha256Hex(buf.subarray(1000, 5000)), 'a view hashes its own bytes');
    t.equal(asked, 2);
    t.equal(pool.threads, 1, 'a pool thread did the work');
    const plain = randomBytes(1000);
    t.equal(await hash(plain), sha256Hex(plain));
    t.equal(asked, 2, 'not shared: hashed inline');
    t.equal(await inlineHasher(plain), sha256Hex(plain));
    await t.rejects(
      pool.run('artifacts.sha256', { buffer: new SharedArrayBuffer(8), offset: 4, length: 8 }),
      /within the buffer/,
    );
    await t.rejects(
      pool.run('artifacts.sha256', { buffer: new ArrayBuffer(8), offset: 0, length: 8 }),
      /SharedArrayBuffer/,
    );
  },
);

t.test(
  'recent chunks: kept buffers served pinned; eviction oldest first skips pinned ones and gives buffers back; drop',
  async (t) => {
    const r = new RecentChunks(2);
    const back: number[] = [];
    const giveBack = (b: Buffer): void => void back.push(b[0]!);
    const a = Buffer.alloc(4096, 1),
      b = Buffer.alloc(4096, 2),
      c = Buffer.alloc(4096, 3),
      d = Buffer.alloc(4096, 4);
    t.equal(r.keep('x', 0, a, giveBack), true, 'taken over');
    t.equal(
      r.keep('x', 0, Buffer.alloc(1), giveBack),
      false,
      "that chunk is here already: the buffer stays the caller's",
    );
    const held = r.take('x', 0)!;
    t.equal(held, a, 'the buffer itself, no copy');
    r.keep('x', 1, b, giveBack);
    r.keep('x', 2, c, giveBack); // over capacity: chunk 0 is pinned, so chunk 1 (the oldest unpinned) goes
    t.equal(r.take('x', 1), undefined, 'the oldest unpinned chunk was evicted');
    t.same(back, [2], 'and its buffer given back');
    t.equal(r.size, 2);
    t.ok(r.release(held), 'a buffer of ours');
    t.equal(r.release(Buffer.alloc(1)), false, 'not ours: the caller releases it elsewhere');
    r.keep('x', 3, d, giveBack);
    t.equal(r.take('x', 0), undefined, 'chunk 0, unpinned now, went when chunk 3 came');
    t.same(back, [2, 1]);
    const pinned = r.take('x', 2)!;
    r.drop('x');
    t.equal(r.size, 0);
    t.same(back, [2, 1, 4], 'unpinned ones given back at once');
    t.ok(r.release(pinned));
    t.same(back, [2, 1, 4, 3], 'a pinned one when it is released');
    t.equal(r.take('x', 3), undefined);
  },
);

t.test(
  'transfer: a worker fetches the next chunk while the one it received is still being verified and written',
  async (t) => {
    const dir = scratch(t);
    const { source, added, manifest, bytes, root } = await addedSource(dir, randomBytes(16 * 64 * KiB), 64 * KiB);
    t.teardown(() => source.closeReaders());
    // Hashing waits for the test's go: no chunk is written until then.
    let go!: () => void;
    const gate = new Promise<void>((resolve) => {
      go = resolve;
    });
    const writer = ArtifactWriter.create(
      root,
      added.id,
      manifest,
      bytes,
      { name: 'x', addedAt: 1 },
      {
        hash: async (d) => {
          await gate;
          return sha256Hex(d);
        },
      },
    );
    t.teardown(() => writer.close());
    let requests = 0;
    const client = {
      chunk: async (_base: string, id: string, index: number) => {
        requests++;
        return source.readChunk(id, index);
      },
      release: (b: Uint8Array) => source.releaseChunk(b as Buffer),
      have: async () => new Uint8Array(16).fill(1),
    } as unknown as PeerClient;
    const done = runTransfer({
      writer,
      client,
      sources: [{ nodeId: 'a', urls: ['http://a.invalid'], complete: true }],
      concurrency: 2,
      perSource: 2,
      writeAhead: 5,
      runBytes: 0, // one request per chunk: what is counted here
    });
    await new Promise((r) => setTimeout(r, 300));
    t.ok(requests > 2, `more chunks requested (${requests}) than workers (2) while none was written yet`);
    t.ok(requests <= 2 + 5, `at most the workers plus writeAhead (${requests})`);
    go();
    const stats = await done;
    t.equal(stats.chunks, 16);
    await writer.finish();
    t.ok(readFileSync(join(root, added.id, 'files', 'src.bin')).equals(readFileSync(join(dir, 'src.bin'))));
  },
);

t.test('chunk buffer pool: reuses its own buffers per length, refuses others, lets all go once idle', async (t) => {
  const pool = new ChunkBufferPool(2, 100);
  const a = pool.take(8192);
  t.ok(isAligned(a));
  pool.give(a);
  t.equal(pool.take(8192), a, 'reused');
  pool.give(a);
  pool.give(Buffer.alloc(8192));
  pool.give(a.subarray(0, 4096));
  t.equal(pool.size, 1, 'only its own whole buffers come back');
  const more = [pool.take(8192), pool.take(8192), pool.take(8192)]; // a, then two new ones
  for (const b of more) pool.give(b);
  pool.give(pool.take(16384));
  t.equal(pool.size, 3, 'at most perLength (2) per length');
  pool.give(alignedBuffer(8192));
  t.equal(pool.size, 3, 'an aligned buffer another pool made is not taken');
  await new Promise((r) => setTimeout(r, 250));
  t.equal(pool.size, 0, 'idle: the memory goes back');
});

t.test(
  'without WebAssembly (node --jitless) buffers are plain, not aligned, and the writer uses the page cache',
  { skip: skipOrFail(existsSync(ALIGNED_JS) ? undefined : 'dist/native/aligned-memory.js is missing (npm run build)') },
  async (t) => {
    const out = execFileSync(
      process.execPath,
      [
        '--jitless',
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(ALIGNED_JS).href)}); const b = m.alignedBuffer(8192); console.log(JSON.stringify({ wasm: typeof WebAssembly, length: b.length, aligned: m.isAligned(b) }));`,
      ],
      { encoding: 'utf8' },
    );
    t.same(JSON.parse(out), { wasm: 'undefined', length: 8192, aligned: false });
  },
);
