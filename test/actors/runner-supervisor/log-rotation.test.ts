/**
 * A runner's stdout rotates at a size and keeps at most N files; a reader following it from the start reads every
 * line once and in order across many rotations, a tail starts near the end, and a reader that falls behind the
 * cap is told, once, how many bytes rotated away, then goes on from the oldest file left.
 */
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunnerManager } from '../../../src/actors/runner-supervisor/supervisor/runner-manager.js';
import type { ManagerEvent } from '../../../src/actors/runner-supervisor/supervisor/runner-manager-options.js';
import { runnerDir } from '../../../src/actors/runner-supervisor/shared/run-dir.js';
import { bytesOnDisk, listSegments, streamEnd } from '../../../src/actors/runner-supervisor/shared/log-segments.js';
import { RotatingLog } from '../../../src/actors/runner-supervisor/supervisor/rotating-log.js';
import { StreamReader } from '../../../src/actors/runner-supervisor/main/stream-reader.js';
import { loopbackInstance, tempDir } from './fixtures/helpers.js';
import { countInOrder, PACED_PRINTER } from './fixtures/paced-printer.js';

const ROTATION = { maxFiles: 3, maxFileBytes: 64 * 1024 };
const CAP = ROTATION.maxFiles * ROTATION.maxFileBytes;

/** Reads the stream from `from` until `done()` and nothing more is on disk; answers all it read as text. */
async function follow(dir: string, from: number, done: () => boolean): Promise<string> {
  const reader = new StreamReader(dir, 'stdout', from);
  const parts: Buffer[] = [];
  let quiet = 0;
  try {
    for (;;) {
      const chunk = await reader.next();
      if (chunk.length > 0) {
        parts.push(Buffer.from(chunk));
        quiet = 0;
        continue;
      }
      if (done() && ++quiet >= 2) break;
      await sleep(10);
    }
  } finally {
    await reader.close();
  }
  return Buffer.concat(parts).toString('utf8');
}

t.test('an exec job printing 30× the cap: ≤ the cap on disk, a follower reads every line in order', async (t) => {
  const dir = tempDir(t);
  const script = join(dir, 'printer.cjs');
  writeFileSync(script, PACED_PRINTER);
  const lines = 40_000; // ~2 MB of output: about 30 rotations of 64 KiB
  const events: ManagerEvent[] = [];
  const m = new RunnerManager({
    nodeId: 'n',
    dataDir: dir,
    allowExec: true,
    logRotation: ROTATION,
    onEvent: (e) => events.push(e),
  });
  t.teardown(() => m.shutdown());
  const logDir = runnerDir(dir, 'chatty', 'n');
  let peak = 0;
  let exited = false;
  const watchDisk = (async () => {
    while (!exited) {
      peak = Math.max(peak, await bytesOnDisk(await listSegments(logDir, 'stdout')));
      await sleep(5);
    }
  })();
  m.instanceCreated(
    await loopbackInstance('chatty', ['n'], {
      kind: 'exec',
      command: [process.execPath, script, String(lines), String(1_000_000)],
      env: { EXIT_CODE: '3' },
    }),
  );
  const ended = (): boolean =>
    events.some((e) => e.type === 'RunnerStatusChanged' && e.status === 'Ready' && e.exitCode !== undefined);
  const followed = await follow(logDir, 0, ended);
  exited = true;
  await watchDisk;
  const exit = events.find((e) => e.type === 'RunnerStatusChanged' && e.exitCode !== undefined);
  t.match(exit, { exitCode: 3 }, "the job's own exit code is reported");
  t.equal(countInOrder(followed), lines, 'the follower read every line once, in order');
  const segments = await listSegments(logDir, 'stdout');
  const newest = segments.at(-1)!;
  t.ok(newest.base >= 3 * ROTATION.maxFileBytes, `at least 3 rotations (the stream reached ${newest.base} B)`);
  t.ok(segments.length <= ROTATION.maxFiles, `${segments.length} files kept, at most ${ROTATION.maxFiles}`);
  t.ok(peak <= CAP, `on disk at most the cap while it ran (peak ${peak} B ≤ ${CAP} B)`);
  t.ok(segments[0]!.base > 0, 'the oldest files were removed');

  const tail = await follow(logDir, Math.max(0, (await streamEnd(segments)) - 4096), () => true);
  t.match(tail, new RegExp(`line ${lines} x+\\n$`), 'a tail ends with the last line');
  t.ok(tail.length <= 4096, 'and holds no more than asked');

  const fromStart = await follow(logDir, 0, () => true);
  const [notice, ...rest] = fromStart.split('\n');
  t.equal(notice, `… ${segments[0]!.base} bytes rotated away …`, 'reading from the start says what was dropped');
  t.notMatch(rest.join('\n'), /rotated away/, 'once');
  t.match(rest[0], /^line \d+ x+$/, 'and goes on at a whole line');
});

t.test('a reader that falls behind the cap is told once per gap and never repeats a line', async (t) => {
  const dir = tempDir(t);
  const log = new RotatingLog(dir, 'stdout', ROTATION);
  const reader = new StreamReader(dir, 'stdout', 0);
  t.teardown(() => reader.close());
  const write = (from: number, to: number): Promise<void> => {
    let text = '';
    for (let i = from; i <= to; i++) text += `line ${i} ${'y'.repeat(30)}\n`;
    return new Promise((resolve) => log.write(text, () => resolve()));
  };
  await write(1, 100);
  const first = Buffer.from(await reader.next()).toString(); // holds the first file open
  await write(101, 20_000); // far more than the cap while the reader waits
  const parts = [first];
  for (let chunk = await reader.next(); chunk.length > 0; chunk = await reader.next())
    parts.push(Buffer.from(chunk).toString());
  const text = parts.join('');
  const notices = text.match(/… \d+ bytes rotated away …/g) ?? [];
  t.equal(notices.length, 1, 'one notice for the one gap');
  const numbers = [...text.matchAll(/^line (\d+) /gm)].map((m) => Number(m[1]));
  t.ok(
    numbers.every((n, i) => i === 0 || n > numbers[i - 1]!),
    'no line repeated, order kept',
  );
  t.equal(numbers.at(-1), 20_000, 'it reaches the end');
  const missed = Number(/… (\d+) bytes/.exec(notices[0]!)![1]);
  const lineBytes = `line 1 ${'y'.repeat(30)}\n`.length;
  t.ok(missed > 0 && missed % 1 === 0, `the notice counts the bytes (${missed})`);
  t.ok(numbers.length < 20_000 && missed >= lineBytes, 'some lines were really dropped');
  await new Promise<void>((resolve) => log.end(() => resolve()));
});

t.test(
  'a writer that appends and rotates between the reader finding the end and listing the files: no skip',
  async (t) => {
    const dir = tempDir(t);
    const log = new RotatingLog(dir, 'stdout', ROTATION);
    const write = (from: number, to: number): Promise<void> => {
      let text = '';
      for (let i = from; i <= to; i++) text += `line ${i} ${'z'.repeat(30)}\n`;
      return new Promise((resolve) => log.write(text, () => resolve()));
    };
    await write(1, 10);
    let interleaved = false;
    let readTheFirstLines = false;
    // Once the reader holds the first lines, it lists the files only after a read found nothing more: that is the
    // moment the writer slips in.
    const listAfterTheWriter = async (d: string, s: 'stdout' | 'stderr') => {
      if (readTheFirstLines && !interleaved) {
        interleaved = true;
        await write(11, 2_000); // finishes the open file and starts newer ones
      }
      return listSegments(d, s);
    };
    const reader = new StreamReader(dir, 'stdout', 0, listAfterTheWriter);
    t.teardown(() => reader.close());
    const parts: string[] = [];
    for (let chunk = await reader.next(); chunk.length > 0 || !interleaved; chunk = await reader.next()) {
      parts.push(Buffer.from(chunk).toString());
      readTheFirstLines = parts.join('').includes('line 10 ');
    }
    t.ok(interleaved, 'the writer ran between the empty read and the listing');
    const text = parts.join('');
    t.notMatch(text, /rotated away/, 'nothing said to be rotated away: it was all still on disk');
    t.equal(countInOrder(text.replaceAll('z', 'x')), 2_000, 'every line once, in order');
    await new Promise<void>((resolve) => log.end(() => resolve()));
  },
);
