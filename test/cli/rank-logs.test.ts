/**
 * `torus run`'s log follower after the job ended: a node still serving the last lines is waited for while they keep
 * coming (a loaded node once delivered a rank's tail after the old fixed 5 s and `run` dropped it silently); a
 * stream that sends nothing for the idle time is given up on and named.
 */
import t, { type Test } from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RankLogs } from '../../src/cli/rank-logs.js';

/** A logs route: rank 0's stdout sends `lines` lines in bursts `everyMs` apart, then ends; other streams hang open. */
async function logsServer(t: Test, lines: number, perBurst: number, everyMs: number): Promise<string> {
  const open: ServerResponse[] = [];
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    if (!req.url?.includes('rank=0&stream=stdout')) {
      res.write('one line\n');
      open.push(res);
      return;
    }
    let next = 1;
    const burst = (): void => {
      const chunk: string[] = [];
      for (let i = 0; i < perBurst && next <= lines; i++) chunk.push(`line ${next++}\n`);
      res.write(chunk.join(''));
      if (next > lines) res.end();
      else setTimeout(burst, everyMs);
    };
    burst();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const res of open) res.destroy();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function follower(base: string) {
  const out: string[] = [];
  const err: string[] = [];
  const logs = new RankLogs({
    urlFor: (query) => `${base}/v1/instances/j/logs?${query}`,
    headers: {},
    io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } },
    nameOf: (node) => node,
  });
  return { logs, out, err };
}

t.test('lines that keep coming after the job ended are all printed, however long they take', async (t) => {
  // 40 lines over ~2.6 s, a burst every 200 ms: longer than the idle time, never idle that long.
  const base = await logsServer(t, 40, 3, 200);
  const { logs, out } = follower(base);
  logs.follow(['a']);
  const open = await logs.drained(1000);
  logs.close();
  const lines = out
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('[rank 0 a] line '));
  t.equal(lines.length, 40, 'every line of rank 0, none cut at a fixed time');
  t.equal(lines.at(-1), '[rank 0 a] line 40');
  t.same(
    open.map((o) => `${o.rank} ${o.stream}`),
    ['0 stderr'],
    'only the stream that went quiet (rank 0 stderr hangs after one line) is named',
  );
});

t.test('a stream that goes quiet is given up on after the idle time and named', async (t) => {
  const base = await logsServer(t, 1, 1, 10);
  const { logs, out } = follower(base);
  logs.follow(['a', 'b']);
  const started = Date.now();
  const open = await logs.drained(600);
  const waited = Date.now() - started;
  logs.close();
  t.ok(waited >= 550 && waited < 5000, `gave up after the idle time (${waited} ms)`);
  t.same(
    open.map((o) => `${o.rank} ${o.node} ${o.stream}`),
    ['0 a stderr', '1 b stdout', '1 b stderr'],
    'the streams still open, with their ranks',
  );
  t.match(out.join(''), /\[rank 1 b\] one line\n/, 'what they sent before going quiet was printed');
});
