import t from 'tap';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { ArtifactWriter } from '../../src/artifacts/writer.js';
import {
  checkManifest,
  decodeManifest,
  encodeManifest,
  manifestId,
  type Manifest,
} from '../../src/artifacts/manifest.js';
import { artifactSigner, ArtifactProofs } from '../../src/artifacts/proof.js';
import { sha256Hex } from '../../src/artifacts/ids.js';
import { addedSource } from './fixtures.js';

const KiB = 1024;

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-art-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function makeTree(root: string): void {
  mkdirSync(join(root, 'sub/deeper'), { recursive: true });
  writeFileSync(join(root, 'weights.bin'), randomBytes(300 * KiB + 17));
  writeFileSync(join(root, 'sub/tokenizer.json'), '{"a":1}');
  writeFileSync(join(root, 'sub/deeper/empty'), '');
  chmodSync(join(root, 'sub/tokenizer.json'), 0o640);
  chmodSync(join(root, 'weights.bin'), 0o755);
}

t.test(
  'add → get round trip is bit-identical, with modes; the id is the manifest hash; adding again is the same artifact',
  async (t) => {
    const dir = scratch(t);
    makeTree(join(dir, 'model'));
    const store = new ArtifactStore(join(dir, 'data/artifacts'));
    const added = await store.add(join(dir, 'model'), { name: 'model', chunkSize: 64 * KiB });
    t.equal(added.files, 3);
    t.equal(added.chunks, 5 + 1, '300 KiB+17 in 64 KiB chunks is 5, the 7-byte file 1, the empty file none');
    t.equal(added.bytes, 300 * KiB + 17 + 7);
    t.ok((added.methods.hardlink ?? 0) + (added.methods.reflink ?? 0) === 3, 'same filesystem: no byte copied');
    const bytes = readFileSync(join(store.root, added.id, 'manifest.json'));
    t.equal(sha256Hex(bytes), added.id);
    const modeOf = (p: string) => statSync(join(dir, 'model', p)).mode & 0o777;
    t.same(
      decodeManifest(bytes, added.id).files.map((f) => [f.path, f.mode]),
      ['sub/deeper/empty', 'sub/tokenizer.json', 'weights.bin'].map((p) => [p, modeOf(p)]),
    );

    const out = join(dir, 'out');
    await store.exportTo(added.id, out);
    for (const p of ['weights.bin', 'sub/tokenizer.json', 'sub/deeper/empty']) {
      t.ok(readFileSync(join(out, p)).equals(readFileSync(join(dir, 'model', p))), `${p} identical`);
      t.equal(statSync(join(out, p)).mode & 0o777, statSync(join(dir, 'model', p)).mode & 0o777, `${p} mode`);
    }
    t.not(
      statSync(join(out, 'weights.bin')).ino,
      statSync(join(dir, 'model/weights.bin')).ino,
      'the export is a copy, never a link into the store',
    );

    const again = await store.add(join(dir, 'model'), { name: 'renamed', chunkSize: 64 * KiB });
    t.equal(again.id, added.id);
    t.equal(again.existed, true);
    t.equal(store.list().length, 1);
    t.equal(store.list()[0]!.name, 'renamed');
    t.ok(store.remove(added.id));
    t.same(store.list(), []);
    t.ok(existsSync(join(dir, 'model/weights.bin')), "removing from the store leaves the user's file");
  },
);

t.test('a stored file changed on disk is refused by get (never exported silently wrong)', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'f.bin'), randomBytes(100 * KiB));
  const store = new ArtifactStore(join(dir, 'store'));
  const added = await store.add(join(dir, 'f.bin'), { chunkSize: 64 * KiB });
  writeFileSync(join(dir, 'f.bin'), randomBytes(100 * KiB)); // hard-linked: the store sees the edit
  await t.rejects(store.exportTo(added.id, join(dir, 'out')), { code: 'TORUS_ARTIFACT_CORRUPT' });
  t.notOk(existsSync(join(dir, 'out/f.bin')));
});

t.test('manifests: canonical only, unsafe paths and inconsistent chunk counts refused', async (t) => {
  const m: Manifest = {
    version: 1,
    chunkSize: 65536,
    files: [{ path: 'a/b', size: 70000, mode: 0o644, chunks: ['0'.repeat(64), '1'.repeat(64)] }],
  };
  const bytes = encodeManifest(m);
  t.same(decodeManifest(bytes, manifestId(m)), m);
  t.throws(() => decodeManifest(bytes, 'f'.repeat(64)), /do not hash/);
  t.throws(() => decodeManifest(Buffer.from(JSON.stringify(m, null, 1))), /canonical/);
  for (const path of ['../x', '/etc/passwd', 'a//b', 'a/./b', 'a\\b', '', 'a/..']) {
    t.throws(
      () => checkManifest({ ...m, files: [{ ...m.files[0], path }] }),
      { code: 'TORUS_API_VALIDATION' },
      `refuses ${JSON.stringify(path)}`,
    );
  }
  t.throws(() => checkManifest({ ...m, files: [{ ...m.files[0], chunks: ['0'.repeat(64)] }] }), /chunk count/);
  t.throws(
    () =>
      checkManifest({
        ...m,
        files: [
          { path: 'b', size: 0, mode: 0, chunks: [] },
          { path: 'a', size: 0, mode: 0, chunks: [] },
        ],
      }),
    /sorted/,
  );
  t.throws(
    () =>
      checkManifest({
        ...m,
        files: [
          { path: 'a', size: 0, mode: 0, chunks: [] },
          { path: 'a/b', size: 0, mode: 0, chunks: [] },
        ],
      }),
    /file and a directory/,
  );
});

t.test(
  'writer: a chunk that fails verification is not written; a resumed writer keeps the verified chunks',
  async (t) => {
    const dir = scratch(t);
    const data = randomBytes(200 * KiB);
    const { source, added, manifest, bytes, root } = await addedSource(dir, data, 64 * KiB);
    let w = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    const bad = Buffer.from(await source.readChunk(added.id, 1));
    bad[10] = bad[10]! ^ 0xff;
    await t.rejects(w.write(1, bad), { code: 'TORUS_ARTIFACT_CORRUPT' });
    t.equal(w.count, 0);
    await w.write(0, await source.readChunk(added.id, 0));
    await w.write(2, await source.readChunk(added.id, 2));
    await w.close();
    w = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    t.same([...w.have], [1, 0, 1, 0], 'resumed from the journal');
    const waiting = w.waitFor(1, 5000);
    await w.write(1, await source.readChunk(added.id, 1));
    t.equal(await waiting, true, 'a waiter (downstream of a chain) is woken when the chunk is verified');
    await w.write(3, await source.readChunk(added.id, 3));
    await w.finish();
    const dest = new ArtifactStore(root);
    t.equal(dest.describe(added.id)!.complete, true);
    await dest.exportTo(added.id, join(dir, 'out'));
    t.ok(readFileSync(join(dir, 'out/src.bin')).equals(data));
    t.notOk(existsSync(join(root, added.id, 'verified.log')), 'journal removed once complete');
  },
);

t.test(
  'writer: chunks are served once written, journaled only once synced (a kill loses at most the unsynced batch)',
  async (t) => {
    const dir = scratch(t);
    const { source, added, manifest, bytes, root } = await addedSource(dir, randomBytes(200 * KiB), 64 * KiB);
    const w = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    await w.write(0, await source.readChunk(added.id, 0));
    await w.flush();
    await w.write(2, await source.readChunk(added.id, 2));
    t.same([...w.have], [1, 0, 1, 0], 'both servable (a chain downstream may have them)');
    t.equal(w.count, 1, 'only the synced one counts as held');
    t.equal(readFileSync(join(root, added.id, 'verified.log')).length, 4, 'the journal names only the synced chunk');
    // What a node killed now would find: the journal without the unsynced chunk.
    const after = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 });
    t.same([...after.have], [1, 0, 0, 0], 'a resume after a kill refetches the unsynced chunk');
    await after.close();
    await w.flush();
    t.equal(w.count, 2);
    t.equal(readFileSync(join(root, added.id, 'verified.log')).length, 8);
    await w.close();
  },
);

t.test(
  'writer: the chunk that fills a sync batch does not wait for its sync; at most one batch is left unjournaled',
  async (t) => {
    const dir = scratch(t);
    const MiB = 1024 * KiB;
    const { source, added, manifest, bytes, root } = await addedSource(dir, randomBytes(64 * MiB), 16 * MiB); // FLUSH_BYTES (32 MiB) = 2 chunks
    // No timed sync (its 500 ms could fire between the writes on a loaded machine): only the size-driven ones.
    const w = ArtifactWriter.create(root, added.id, manifest, bytes, { name: 'x', addedAt: 1 }, { flushMs: 600_000 });
    t.teardown(() => w.close());
    await w.write(0, await source.readChunk(added.id, 0));
    await w.write(1, await source.readChunk(added.id, 1));
    // The sync of chunks 0 and 1 runs in the thread pool; the write resolved before it ended (it did not wait).
    t.same([...w.have], [1, 1, 0, 0], 'both written and servable');
    t.equal(w.count, 0, 'the write returned while their sync still runs: not journaled yet');
    await w.write(2, await source.readChunk(added.id, 2));
    await w.write(3, await source.readChunk(added.id, 3)); // a full batch again: waits only if the first sync still runs
    t.ok(w.count === 2 || w.count === 4, `a returning write leaves at most one batch unjournaled (count ${w.count})`);
    await w.finish();
    t.ok(
      readFileSync(join(root, added.id, 'files', 'src.bin')).equals(readFileSync(join(dir, 'src.bin'))),
      'bit-identical',
    );
  },
);

t.test('peer proofs: method, path, body, sender, time and a nonce under the data key; once only', async (t) => {
  const key = 'ab'.repeat(32);
  const now = 1_000_000;
  const h = Object.values(artifactSigner(key, 'node-b', () => now)('GET', '/v1/peer/artifacts/x/have'))[0];
  const proofs = new ArtifactProofs(key, () => now + 5000);
  t.match(proofs.check('GET', '/v1/peer/artifacts/y/have', h), { ok: false }, 'another path');
  t.match(proofs.check('POST', '/v1/peer/artifacts/x/have', h), { ok: false }, 'another method');
  t.match(proofs.check('GET', '/v1/peer/artifacts/x/have', h, Buffer.from('x')), { ok: false }, 'another body');
  t.match(
    new ArtifactProofs('cd'.repeat(32), () => now).check('GET', '/v1/peer/artifacts/x/have', h),
    { ok: false },
    'another key',
  );
  t.match(proofs.check('GET', '/v1/peer/artifacts/x/have', undefined), { ok: false }, 'missing');
  t.match(proofs.check('GET', '/v1/peer/artifacts/x/have', 'garbage'), { ok: false }, 'malformed');
  t.same(proofs.check('GET', '/v1/peer/artifacts/x/have', h), { ok: true, nodeId: 'node-b' });
  t.match(proofs.check('GET', '/v1/peer/artifacts/x/have', h), { ok: false, why: /replay/ }, 'once only');
  const old = Object.values(artifactSigner(key, 'node-b', () => now - 200_000)('GET', '/v1/peer/artifacts/x/have'))[0];
  t.match(proofs.check('GET', '/v1/peer/artifacts/x/have', old), { ok: false, why: /window/ }, 'too old');
  t.same(
    new ArtifactProofs(null).check('GET', '/x', undefined),
    { ok: true, nodeId: '' },
    'an open cluster asks no proof',
  );
});
