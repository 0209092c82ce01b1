/**
 * The shard directory's copies (shard-copy.ts): ranges at any offset, across block edges and at the end of a file
 * whose size is no multiple of the alignment, written front to back into a file of the exact size with the same
 * bytes; a range past the end of the source is refused naming the byte.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RangeReader, SequentialWriter } from '../../../src/artifacts/model/shard-copy.js';

t.test('ranges copied at any offset give the same bytes, the file its exact size', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-shard-copy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const MiB = 2 ** 20;
  const source = randomBytes(9 * MiB + 1234);
  writeFileSync(join(dir, 'src'), source);
  const ranges: [number, number][] = [
    [0, 8],
    [8, 4096 + 3],
    [4 * MiB - 5, 4 * MiB + 7], // across a read block's edge
    [5 * MiB + 1, 9 * MiB + 1000], // more than one block
    [9 * MiB + 1000, 9 * MiB + 1234], // up to the unaligned end
    [77, 77], // empty
  ];
  const header = Buffer.from('header-of-13b');
  const reader = await RangeReader.open(join(dir, 'src'));
  const writer = await SequentialWriter.create(join(dir, 'out'));
  await writer.append(header);
  for (const [b, e] of ranges) await reader.copy(b, e, (piece) => writer.append(piece));
  const size = await writer.finish();
  await reader.close();
  const want = Buffer.concat([header, ...ranges.map(([b, e]) => source.subarray(b, e))]);
  t.equal(size, want.length);
  t.equal(statSync(join(dir, 'out')).size, want.length, 'cut to its size after the padded last write');
  t.ok(readFileSync(join(dir, 'out')).equals(want), 'the same bytes, in order');
  await t.rejects(SequentialWriter.create(join(dir, 'out')), { code: 'EEXIST' }, 'never over an existing file');

  const short = await RangeReader.open(join(dir, 'src'));
  await t.rejects(
    short.copy(source.length - 10, source.length + 10, async () => {}),
    {
      code: 'TORUS_MODEL_INVALID',
      message: new RegExp(`short read at byte ${source.length} `),
    },
  );
  await short.close();
});
