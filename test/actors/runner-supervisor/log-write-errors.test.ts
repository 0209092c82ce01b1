/**
 * Runner output that cannot be written is dropped (the job goes on), but never silently: the log counts it, tells
 * its owner with the error, and says so in the log itself where the gap is, once a write succeeds again; the
 * supervisor's warning about it is rate-limited. Real write errors: a segment that is a link to /dev/full (ENOSPC on
 * every write) and a directory where the segment file should be (EISDIR when it is opened).
 */
import t from 'tap';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { RotatingLog } from '../../../src/actors/runner-supervisor/supervisor/rotating-log.js';
import { LogDrops } from '../../../src/actors/runner-supervisor/supervisor/log-drops.js';
import { segmentName } from '../../../src/actors/runner-supervisor/shared/log-segments.js';
import { StreamReader } from '../../../src/actors/runner-supervisor/main/stream-reader.js';
import { createLogger, setLogSink } from '../../../src/runtime/log.js';
import { tempDir } from './fixtures/helpers.js';

const ROTATION = { maxFiles: 3, maxFileBytes: 64 * 1024 };

const write = (log: RotatingLog, text: string): Promise<void> =>
  new Promise((resolve) => log.write(text, () => resolve()));

/** Everything a reader of the stream (the logs route's reader) gets from the start. */
async function readAll(dir: string): Promise<string> {
  const reader = new StreamReader(dir, 'stdout', 0);
  const parts: string[] = [];
  try {
    for (let chunk = await reader.next(); chunk.length > 0; chunk = await reader.next())
      parts.push(Buffer.from(chunk).toString());
  } finally {
    await reader.close();
  }
  return parts.join('');
}

t.test('a full disk (ENOSPC): counted, told, and said in the log once it takes output again', async (t) => {
  const dir = tempDir(t);
  const segment = join(dir, segmentName('stdout', 0));
  symlinkSync('/dev/full', segment);
  const told: { bytes: number; code: string | undefined }[] = [];
  const log = new RotatingLog(dir, 'stdout', ROTATION, (bytes, error) =>
    told.push({ bytes, code: (error as NodeJS.ErrnoException).code }),
  );
  await write(log, 'partial ');
  await write(log, 'first line\n');
  t.equal(log.droppedBytes, 19, 'every byte that did not reach the file is counted');
  t.same(told, [
    { bytes: 8, code: 'ENOSPC' },
    { bytes: 11, code: 'ENOSPC' },
  ]);

  rmSync(segment); // the disk has room again: the next write opens the file anew
  await write(log, 'second line\n');
  await new Promise<void>((resolve) => log.end(() => resolve()));
  const text = await readAll(dir);
  t.match(
    text,
    /^… 19 bytes of output could not be written \(ENOSPC: ENOSPC: no space left on device, write\) …\nsecond line\n$/,
    'the reader sees where output is missing and why, then the output',
  );
  t.equal(log.droppedBytes, 19, 'the notice itself is no output');
});

t.test('a file that cannot be opened (EISDIR): the same, and a notice that starts its own line', async (t) => {
  const dir = tempDir(t);
  const second = new RotatingLog(dir, 'stdout', { maxFiles: 3, maxFileBytes: 100 });
  await write(second, 'kept, half a line ');
  mkdirSync(join(dir, segmentName('stdout', 18))); // a directory where the next file belongs
  await write(second, 'x'.repeat(90)); // does not fit the first file: the next one cannot be opened
  t.equal(second.droppedBytes, 90, 'counted');
  rmSync(join(dir, segmentName('stdout', 18)), { recursive: true });
  await write(second, 'after\n');
  await new Promise<void>((resolve) => second.end(() => resolve()));
  t.match(
    await readAll(dir),
    /^kept, half a line \n… 90 bytes of output could not be written \(EISDIR: [^)]*\) …\nafter\n$/,
    'the notice begins a line of its own',
  );
});

t.test('output dropped at the very end is said when the log is ended, if the file takes it', async (t) => {
  const dir = tempDir(t);
  const segment = join(dir, segmentName('stdout', 0));
  symlinkSync('/dev/full', segment);
  const log = new RotatingLog(dir, 'stdout', ROTATION);
  await write(log, 'lost\n');
  rmSync(segment);
  await new Promise<void>((resolve) => log.end(() => resolve()));
  t.match(await readAll(dir), /^… 5 bytes of output could not be written \(ENOSPC: [^)]*\) …\n$/);
});

t.test('the supervisor warns at most once a minute per runner stream, and counts every byte', async (t) => {
  const lines: string[] = [];
  setLogSink((line) => lines.push(line));
  t.teardown(() => setLogSink((line) => process.stderr.write(`${line}\n`)));
  let now = 0;
  const drops = new LogDrops(createLogger({ component: 'runner-supervisor' }), 60_000, () => now);
  const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
  drops.note('job/n1/0', 'stdout', 100, full);
  now = 10_000;
  drops.note('job/n1/0', 'stdout', 50, full);
  drops.note('job/n1/0', 'stderr', 7, full);
  now = 59_000;
  drops.note('job/n1/0', 'stdout', 25, full);
  t.equal(lines.length, 2, 'one warning per runner stream within the minute');
  now = 61_000;
  drops.note('job/n1/0', 'stdout', 1, full);
  t.equal(lines.length, 3, 'the next one after it');
  const records = lines.map((l) => JSON.parse(l));
  t.match(records[0], { level: 'warn', runnerId: 'job/n1/0', stream: 'stdout', bytes: 100, code: 'ENOSPC' });
  t.match(records[1], { stream: 'stderr', bytes: 7 });
  t.match(records[2], { stream: 'stdout', bytes: 76 }, 'with what was dropped since the last warning');
  t.same(drops.totals(), { stdout: 176, stderr: 7 }, 'every byte counted');
});
