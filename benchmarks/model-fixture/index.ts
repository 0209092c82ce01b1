/**
 * Writes a model directory to test with (docs/artifacts.md, "A model to test with"):
 *   npm run bench -- model-fixture --out DIR [--size 1GiB] [--layers 16] [--shards 4] [--seed S]
 * Without --out it writes a 64 MiB model to a temporary directory, prints how fast, and removes it (so running
 * every suite stays cheap).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBytes } from '../../src/cli/table.js';
import { flag } from '../args.js';
import { printTable } from '../table.js';
import { makeModel } from './make-model.js';

const out = flag('--out');
const dir = out ?? mkdtempSync(join(tmpdir(), 'torus-model-'));
const whole = (name: string, fallback: number): number => {
  const v = flag(name);
  const n = v === undefined ? fallback : Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}: expected a whole number ≥ 1, got ${v}`);
  return n;
};
try {
  const size = flag('--size') ?? (out ? '1GiB' : '64MiB');
  const bytes = parseBytes(size);
  if (bytes === undefined) throw new Error(`--size: expected a size such as 1GiB, got ${size}`);
  const started = process.hrtime.bigint();
  const made = makeModel({
    out: dir,
    bytes,
    layers: whole('--layers', 16),
    shards: whole('--shards', 4),
    ...(flag('--seed') ? { seed: flag('--seed')! } : {}),
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  printTable(
    `model fixture in ${out ?? '(temporary, removed)'}`,
    [
      {
        bytes: made.bytes,
        tensors: made.tensors,
        files: made.files.length,
        'hidden size': made.hiddenSize,
        vocab: made.vocab,
        seconds: Math.round(seconds * 1000) / 1000,
        'MiB/s': Math.round(made.bytes / 2 ** 20 / seconds),
      },
    ],
    process.argv.includes('--json'),
  );
} finally {
  if (!out) rmSync(dir, { recursive: true, force: true });
}
