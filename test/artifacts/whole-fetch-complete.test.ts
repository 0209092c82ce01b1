/**
 * A whole fetch ends complete in the store: its last chunks, still in the batch that is made durable every 32 MiB or
 * 500 ms, are synced and journaled before the transfer decides whether the copy is whole (a small artifact fetched
 * in under 500 ms was once left partial, and `artifacts get` refused to export it: "only partly here").
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { startNodes, until } from './fixtures.js';

const CHUNK = 64 * 1024;

t.test('a whole fetch is complete in the store once its transfer says complete, and exports', async (t) => {
  const {
    nodes: [a, b],
  } = await startNodes(t, 2);
  const dir = mkdtempSync(join(tmpdir(), 'torus-art-whole-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bytes = randomBytes(40 * CHUNK + 100);
  writeFileSync(join(dir, 'w.bin'), bytes);
  const added = await a!.service.store.add(join(dir, 'w.bin'), { name: 'w', chunkSize: CHUNK });
  await a!.service.announce(added.id);
  await b!.service.fetch(added.id);
  await until('done', () => b!.service.transfer(added.id)?.state === 'complete');
  t.equal(b!.service.store.describe(added.id)?.complete, true, 'the store holds it whole');
  const out = join(dir, 'out');
  await b!.service.store.exportTo(added.id, out);
  t.ok(readFileSync(join(out, 'w.bin')).equals(bytes), 'and exports it, bit-identical');
});
