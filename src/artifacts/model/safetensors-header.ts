/**
 * The safetensors header, read and never trusted (docs/artifacts.md, "Models"). A file is
 * `[u64 LE n][n bytes of JSON][data]`; the JSON maps tensor names to `{dtype, shape, data_offsets: [begin, end]}`
 * (offsets relative to the data) plus an optional `__metadata__` of strings. The rules are the reference
 * reader's (the `safetensors` crate): a header of at most 100 000 000 bytes that starts with `{`, known dtypes,
 * `end - begin` equal to dtype size × elements, and the tensors, sorted by offset, covering the data exactly
 * (no gap, no overlap, nothing after the last). Every refusal is a `TORUS_MODEL_INVALID` naming the file and the
 * byte offset of what is wrong.
 */
import { open } from 'node:fs/promises';
import { TorusError } from '../../protocols/errors.js';

/** The reference reader's own limit; a header this large is already far beyond any real model's. */
export const MAX_HEADER_BYTES = 100_000_000;
/** Longer names are refused: they end up in the replicated state. */
export const MAX_TENSOR_NAME = 512;
const MAX_DIMS = 16;

/** Bytes per element of every dtype this reader accepts (the byte-sized ones of the format). */
export const DTYPE_BYTES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  F8_E8M0: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
  C64: 8,
};

export interface HeaderTensor {
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  /** absolute byte range in the file: [begin, end) */
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsHeader {
  /** 8 + n: where the data starts */
  readonly dataStart: number;
  readonly fileBytes: number;
  readonly metadata?: Readonly<Record<string, string>>;
  /** in file order */
  readonly tensors: readonly HeaderTensor[];
}

export function invalidModel(file: string, offset: number, why: string): TorusError {
  return new TorusError('TORUS_MODEL_INVALID', `${file}: byte ${offset}: ${why}`, { file, offset });
}

/** Reads and checks the header of the safetensors file at `path`; `name` is how errors call it. */
export async function readSafetensorsHeader(path: string, name = path): Promise<SafetensorsHeader> {
  const fh = await open(path, 'r');
  try {
    const fileBytes = (await fh.stat()).size;
    if (fileBytes < 8) throw invalidModel(name, 0, `${fileBytes} bytes: shorter than the 8-byte header length`);
    const prefix = Buffer.alloc(8);
    await fh.read(prefix, 0, 8, 0);
    const n = prefix.readBigUInt64LE(0);
    if (n > BigInt(MAX_HEADER_BYTES))
      throw invalidModel(name, 0, `header length ${n} is over the ${MAX_HEADER_BYTES}-byte limit`);
    if (8n + n > BigInt(fileBytes))
      throw invalidModel(name, 0, `header length ${n} runs past the end of the file (${fileBytes} bytes)`);
    const json = Buffer.alloc(Number(n));
    const { bytesRead } = await fh.read(json, 0, json.length, 8);
    if (bytesRead !== json.length) throw invalidModel(name, 8 + bytesRead, 'the file ended while reading the header');
    return parseSafetensorsHeader(json, fileBytes, name);
  } finally {
    await fh.close();
  }
}

/** Checks a header's JSON bytes (`json`, the n bytes after the length) against a file of `fileBytes`. */
export function parseSafetensorsHeader(json: Buffer, fileBytes: number, name: string): SafetensorsHeader {
  const dataStart = 8 + json.length;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(json);
  } catch {
    throw invalidModel(name, 8, 'the header is not valid UTF-8');
  }
  if (!text.startsWith('{')) throw invalidModel(name, 8, 'the header does not start with "{"');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const at = /position (\d+)/.exec((error as Error).message);
    const offset = at ? 8 + Buffer.byteLength(text.slice(0, Number(at[1]))) : 8;
    throw invalidModel(name, offset, `the header is not JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw invalidModel(name, 8, 'the header is not a JSON object');
  // Where a tensor's entry starts, for errors: its key's first occurrence in the header.
  const where = (key: string): number => {
    const i = json.indexOf(JSON.stringify(key));
    return i < 0 ? 8 : 8 + i;
  };
  let metadata: Record<string, string> | undefined;
  const tensors: HeaderTensor[] = [];
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (key === '__metadata__') {
      metadata = checkMetadata(value, name, where(key));
      continue;
    }
    tensors.push(checkTensor(key, value, dataStart, name, where(key)));
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let expected = dataStart;
  for (const t of tensors) {
    if (t.begin !== expected)
      throw invalidModel(
        name,
        where(t.name),
        `tensor "${t.name}" starts at data offset ${t.begin - dataStart}, expected ${expected - dataStart} (${
          t.begin < expected ? 'it overlaps the tensor before it' : 'a gap before it'
        })`,
      );
    expected = t.end;
  }
  if (expected !== fileBytes)
    throw invalidModel(
      name,
      expected,
      expected > fileBytes
        ? `the tensors end at byte ${expected}, past the end of the file (${fileBytes} bytes)`
        : `${fileBytes - expected} bytes after the last tensor belong to no tensor`,
    );
  return { dataStart, fileBytes, tensors, ...(metadata ? { metadata } : {}) };
}

function checkMetadata(value: unknown, name: string, offset: number): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidModel(name, offset, '"__metadata__" is not an object');
  for (const [k, v] of Object.entries(value))
    if (typeof v !== 'string') throw invalidModel(name, offset, `"__metadata__.${k}" is not a string`);
  return value as Record<string, string>;
}

function checkTensor(key: string, value: unknown, dataStart: number, name: string, offset: number): HeaderTensor {
  const fail = (why: string): never => {
    throw invalidModel(name, offset, `tensor "${key.slice(0, 80)}": ${why}`);
  };
  if (key.length === 0 || key.length > MAX_TENSOR_NAME) fail(`a name of 1 to ${MAX_TENSOR_NAME} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(key)) fail('control characters in the name');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not an object');
  const { dtype, shape, data_offsets: offsets, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) fail(`unknown field "${extra[0]}"`);
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_BYTES, dtype))
    fail(`unknown dtype ${JSON.stringify(dtype)?.slice(0, 40)} (known: ${Object.keys(DTYPE_BYTES).join(', ')})`);
  if (!Array.isArray(shape) || shape.length > MAX_DIMS || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
    fail(`shape must be at most ${MAX_DIMS} whole numbers ≥ 0`);
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[0] > offsets[1]
  )
    fail('data_offsets must be [begin, end] with 0 ≤ begin ≤ end');
  const [begin, end] = offsets as [number, number];
  // BigInt: a hostile shape's product overflows a double long before it is refused.
  let bytes = BigInt(DTYPE_BYTES[dtype as string]!);
  for (const d of shape as number[]) bytes *= BigInt(d);
  if (bytes !== BigInt(end - begin))
    fail(`data_offsets [${begin}, ${end}] hold ${end - begin} bytes, but ${dtype} [${shape}] needs ${bytes}`);
  return {
    name: key,
    dtype: dtype as string,
    shape: shape as number[],
    begin: dataStart + begin,
    end: dataStart + end,
  };
}
