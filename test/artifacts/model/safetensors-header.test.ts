import t from 'tap';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_HEADER_BYTES, readSafetensorsHeader } from '../../../src/artifacts/model/safetensors-header.js';
import { TorusError } from '../../../src/protocols/errors.js';

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-st-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A safetensors file from a header (object or raw text) and a data section of `data` bytes. */
function file(dir: string, header: unknown, data: number, name = 'x.safetensors'): string {
  const json = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat([length, json, Buffer.alloc(data, 7)]));
  return path;
}

type Assert = Pick<typeof t, 'ok' | 'equal' | 'match' | 'same'>;

async function refused(t: Assert, path: string, offset: number, words: RegExp): Promise<void> {
  const error = await readSafetensorsHeader(path, 'x.safetensors').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof TorusError, 'a TorusError');
  const e = error as TorusError;
  t.equal(e.code, 'TORUS_MODEL_INVALID');
  t.match(e.message, new RegExp(`^x\\.safetensors: byte ${offset}: `), `names the file and byte ${offset}`);
  t.match(e.message, words);
  t.same(e.details, { file: 'x.safetensors', offset });
}

const good = {
  __metadata__: { format: 'pt' },
  b: { dtype: 'F32', shape: [2, 3], data_offsets: [4, 28] },
  a: { dtype: 'BF16', shape: [2], data_offsets: [0, 4] },
  e: { dtype: 'U8', shape: [0], data_offsets: [28, 28] },
};

t.test('a valid header: tensors in file order with absolute byte ranges', async (t) => {
  const dir = scratch(t);
  const json = JSON.stringify(good);
  const h = await readSafetensorsHeader(file(dir, good, 28));
  const start = 8 + Buffer.byteLength(json);
  t.equal(h.dataStart, start);
  t.same(h.metadata, { format: 'pt' });
  t.same(
    h.tensors.map((x) => [x.name, x.dtype, x.shape, x.begin - start, x.end - start]),
    [
      ['a', 'BF16', [2], 0, 4],
      ['b', 'F32', [2, 3], 4, 28],
      ['e', 'U8', [0], 28, 28],
    ],
  );
});

t.test('hostile and malformed files are refused with the file and the byte offset', async (t) => {
  const dir = scratch(t);
  const w = (header: unknown, data: number) => file(dir, header, data);
  const at = (key: string, header: unknown = undefined): number => {
    const text = typeof header === 'string' ? header : JSON.stringify(header);
    return 8 + Buffer.from(text).indexOf(JSON.stringify(key));
  };

  await t.test('shorter than the length', async (t) => {
    writeFileSync(join(dir, 'x.safetensors'), Buffer.from([1, 2, 3]));
    await refused(t, join(dir, 'x.safetensors'), 0, /shorter than the 8-byte header length/);
  });
  await t.test('header length past the end of the file', async (t) => {
    const path = w(good, 28);
    const fd = openSync(path, 'r+');
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(1000n);
    writeSync(fd, length, 0, 8, 0);
    closeSync(fd);
    await refused(t, path, 0, /header length 1000 runs past the end of the file/);
  });
  await t.test('a header length of 2^64 − 1', async (t) => {
    const path = w(good, 28);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(8, 0xff), 0, 8, 0);
    closeSync(fd);
    await refused(t, path, 0, /over the 100000000-byte limit/);
  });
  await t.test('a header over 100 MB in a file that really is that long', async (t) => {
    const path = join(dir, 'x.safetensors');
    const fd = openSync(path, 'w');
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(MAX_HEADER_BYTES + 1));
    writeSync(fd, length, 0, 8, 0);
    writeSync(fd, Buffer.from('{'), 0, 1, 8);
    ftruncateSync(fd, MAX_HEADER_BYTES + 1024); // sparse: the bound refuses it, not the end of the file
    closeSync(fd);
    await refused(t, path, 0, /header length 100000001 is over the 100000000-byte limit/);
  });
  await t.test('not JSON: the offset of the bad byte', async (t) => {
    await refused(t, w('{"a": {"dtype": "F32",, }}', 0), 8 + 22, /not JSON/);
  });
  await t.test('not UTF-8', async (t) => {
    const json = Buffer.from('{"\xff"}', 'latin1');
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(json.length));
    writeFileSync(join(dir, 'x.safetensors'), Buffer.concat([length, json]));
    await refused(t, join(dir, 'x.safetensors'), 8, /not valid UTF-8/);
  });
  await t.test('not an object', async (t) => {
    await refused(t, w('[1, 2]', 0), 8, /does not start with "\{"/);
  });
  await t.test('unknown dtype', async (t) => {
    const h = { a: { dtype: 'F128', shape: [1], data_offsets: [0, 16] } };
    await refused(t, w(h, 16), at('a', h), /tensor "a": unknown dtype "F128"/);
  });
  await t.test('a shape that claims far more bytes than the offsets hold', async (t) => {
    const h = { big: { dtype: 'F32', shape: [2 ** 40, 2 ** 40, 2 ** 40], data_offsets: [0, 4] } };
    await refused(
      t,
      w(h, 4),
      at('big', h),
      /hold 4 bytes, but F32 \[1099511627776,1099511627776,1099511627776\] needs/,
    );
  });
  await t.test('offsets out of range (past the end of the file)', async (t) => {
    const h = { a: { dtype: 'U8', shape: [100], data_offsets: [0, 100] } };
    await refused(t, w(h, 10), 8 + Buffer.byteLength(JSON.stringify(h)) + 100, /past the end of the file/);
  });
  await t.test('overlapping tensors', async (t) => {
    const h = {
      a: { dtype: 'U8', shape: [8], data_offsets: [0, 8] },
      b: { dtype: 'U8', shape: [8], data_offsets: [4, 12] },
    };
    await refused(t, w(h, 12), at('b', h), /tensor "b" starts at data offset 4, expected 8 \(it overlaps/);
  });
  await t.test('a gap between tensors', async (t) => {
    const h = {
      a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] },
      b: { dtype: 'U8', shape: [4], data_offsets: [8, 12] },
    };
    await refused(t, w(h, 12), at('b', h), /starts at data offset 8, expected 4 \(a gap/);
  });
  await t.test('bytes after the last tensor', async (t) => {
    const h = { a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] } };
    await refused(
      t,
      w(h, 10),
      8 + Buffer.byteLength(JSON.stringify(h)) + 4,
      /6 bytes after the last tensor belong to no tensor/,
    );
  });
  await t.test('begin after end, negative or fractional offsets', async (t) => {
    for (const offsets of [[4, 0], [-1, 3], [0.5, 4], [0], 'x']) {
      const h = { a: { dtype: 'U8', shape: [4], data_offsets: offsets } };
      await refused(t, w(h, 4), at('a', h), /data_offsets must be \[begin, end\]/);
    }
  });
  await t.test('a bad shape, an unknown field, a control character in a name, bad metadata', async (t) => {
    const cases: [unknown, RegExp][] = [
      [{ a: { dtype: 'U8', shape: [-4], data_offsets: [0, 4] } }, /shape must be/],
      [{ a: { dtype: 'U8', shape: 'x', data_offsets: [0, 4] } }, /shape must be/],
      [{ a: { dtype: 'U8', shape: [4], data_offsets: [0, 4], extra: 1 } }, /unknown field "extra"/],
      [{ 'a\u0001': { dtype: 'U8', shape: [4], data_offsets: [0, 4] } }, /control characters/],
      [{ a: 5 }, /not an object/],
    ];
    for (const [h, words] of cases) await refused(t, w(h, 4), at(Object.keys(h as object)[0]!, h), words);
    const meta = { __metadata__: { n: 1 }, a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] } };
    await refused(t, w(meta, 4), at('__metadata__', meta), /"__metadata__.n" is not a string/);
  });
});
