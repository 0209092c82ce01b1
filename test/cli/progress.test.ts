import t from 'tap';
import { runBenchRingLiveCommand } from '../../src/cli/bench-ring-live.js';
import { runMeasureCommand } from '../../src/cli/measure.js';
import { TEST_TOKEN, startApi } from '../api/fixtures/harness.js';

/** A CLI io whose writes are kept with the time they happened; stdout and stderr are TTYs or not independently. */
function io(tty: { stdout?: boolean; stderr?: boolean } = {}) {
  const writes: Array<{ stream: 'out' | 'err'; text: string; at: number }> = [];
  const stream = (name: 'out' | 'err', isTTY: boolean) => ({
    write: (text: string) => writes.push({ stream: name, text, at: Date.now() }),
    isTTY,
  });
  return {
    io: { stdout: stream('out', tty.stdout ?? false), stderr: stream('err', tty.stderr ?? false) },
    writes: (name: 'out' | 'err') => writes.filter((w) => w.stream === name),
    text: (name: 'out' | 'err') =>
      writes
        .filter((w) => w.stream === name)
        .map((w) => w.text)
        .join(''),
  };
}

t.test('measure --wait prints each link as its measurement lands, with rate and RTT', async (t) => {
  const { api, node } = await startApi(t);
  node.measureStepMs = 1500; // the second link lands 1.5 s after the first: streamed lines are that far apart
  const c = io();
  t.equal(
    await runMeasureCommand(['--api', api.url, '--token', TEST_TOKEN, '--peer', 'node-b', '--wait'], c.io),
    0,
    c.text('err'),
  );
  const lines = c.writes('out');
  t.equal(lines.length, 2, 'one write per link (node-b has two addresses)');
  t.match(
    lines[0]!.text,
    /^measured node-b at 10\.77\.\d\.2 \((thunderbolt|ethernet)\): 2\.00 Gbit\/s, RTT 0\.25 ms\n$/,
  );
  t.match(
    lines[1]!.text,
    /^measured node-b at 10\.77\.\d\.2 \((thunderbolt|ethernet)\): 4\.00 Gbit\/s, RTT 0\.50 ms\n$/,
  );
  // Printed as each measurement landed, not together at the end (the old table came in one write).
  t.ok(
    lines[1]!.at - lines[0]!.at >= 750,
    `the second line came later, with its own measurement (${lines[1]!.at - lines[0]!.at} ms apart)`,
  );

  const j = io();
  t.equal(
    await runMeasureCommand(['--api', api.url, '--token', TEST_TOKEN, '--ip', '10.77.1.3', '--wait', '--json'], j.io),
    0,
    j.text('err'),
  );
  t.match(JSON.parse(j.text('out')), {
    links: [{ source: 'node-a', sink: 'node-c', ip: '10.77.1.3', type: 'thunderbolt', bandwidthBps: 2e9, rttMs: 0.25 }],
    pending: 0,
  });
  t.equal(j.writes('out').length, 1, '--json prints only the final document');

  const unknown = io();
  t.equal(
    await runMeasureCommand(['--api', api.url, '--token', TEST_TOKEN, '--ip', '10.77.9.9', '--wait'], unknown.io),
    1,
    'a filter matching no link is an error',
  );
  t.match(unknown.text('err'), /no link of this node matches/);

  const alone = await startApi(t, { ids: ['node-a'] });
  const none = io();
  t.equal(await runMeasureCommand(['--api', alone.api.url, '--token', TEST_TOKEN, '--wait'], none.io), 0);
  t.equal(none.text('out'), 'no links to measure\n');
});

t.test(
  "bench ring --live draws on stderr by stderr's TTY: one rewritten line on a terminal, plain lines in a pipe",
  async (t) => {
    const { api } = await startApi(t);
    const args = ['--live', '--api', api.url, '--token', TEST_TOKEN, '--nodes', 'node-a,node-b', '-b', '8', '-e', '64'];

    // stderr a terminal, stdout piped (torus bench ring --live > table.txt): progress is drawn in place.
    const term = io({ stdout: false, stderr: true });
    t.equal(await runBenchRingLiveCommand(args, term.io), 0, term.text('err'));
    const drawn = term.text('err');
    t.match(drawn, /^\rbench [0-9a-f]{8} running/, 'carriage return, no newline per update');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the progress bar's terminal escapes are what is checked
    t.match(drawn, /\rbench [0-9a-f]{8} done 4\/4 #{20} all-reduce 64 B\u001b\[K\n$/, 'last state, then one newline');
    t.equal(drawn.split('\n').length, 2, 'a single line on the terminal');
    t.match(term.text('out'), /^ +size +count/, 'stdout holds only the table');

    // stdout a terminal, stderr piped (2> progress.log): plain lines, no control characters in the log.
    const piped = io({ stdout: true, stderr: false });
    t.equal(await runBenchRingLiveCommand(args, piped.io), 0, piped.text('err'));
    const log = piped.text('err');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no terminal escapes may reach a log
    t.notMatch(log, /[\r\u001b]/, 'no carriage returns or escapes');
    const lines = log.trim().split('\n');
    t.ok(lines.length >= 4, `one line per update (${lines.length})`);
    t.match(lines.at(-1), /^bench [0-9a-f]{8} done 4\/4 #{20} all-reduce 64 B$/);
  },
);

t.test('the progress line shows the bound beside the transfer, and the last line the ratio to it', async (t) => {
  const { formatProgress } = await import('../../src/cli/progress.js');
  const base = { label: 'weights', totalBytes: 2 ** 30, rateBps: 100 * 2 ** 20 };
  const bound = { seconds: 8.59, by: 'in: h2' };
  t.equal(
    formatProgress({ ...base, doneBytes: 2 ** 29, bound, elapsedSeconds: 5 }),
    'weights: 50.0% 512 MiB of 1.0 GiB at 100 MiB/s, ETA 5s, bound 8.6s (in: h2)',
  );
  t.equal(
    formatProgress({ ...base, doneBytes: 2 ** 30, bound, elapsedSeconds: 9.4 }),
    'weights: 100.0% 1.0 GiB of 1.0 GiB at 100 MiB/s, took 9.4s: 1.09x the bound 8.6s (in: h2)',
  );
  t.equal(
    formatProgress({ ...base, doneBytes: 2 ** 30, bound: { seconds: 90, by: 'out: h0' } }),
    'weights: 100.0% 1.0 GiB of 1.0 GiB at 100 MiB/s, bound 1m30s (out: h0)',
  );
  t.equal(
    formatProgress({ ...base, doneBytes: 0 }),
    'weights: 0.0% 0 B of 1.0 GiB at 100 MiB/s, ETA 10s',
    'no bound: as before',
  );
});
