/**
 * The capacity probe (GET /v1/probe/stream, src/actors/network-profiler/probes/stream-source.ts + stream-probe.ts) over real loopback
 * sockets: strict query and head parsing, parallel connections counted together, identity check, exclusivity
 * (busy, force), and hostility on both sides: clients that stop reading, reset, send garbage or bad queries cannot
 * crash the server or hold the probe past its bound; servers that send garbage, endless heads, endless bodies or
 * nothing cannot hold the prober past its bound.
 */
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { TorusError } from '../../../../src/protocols/errors.js';
import { createProbeHandler } from '../../../../src/actors/network-profiler/probes/probe-handler.js';
import { measureStream, parseResponseHead } from '../../../../src/actors/network-profiler/probes/stream-probe.js';
import { decodeStreamQuery, MAX_PROBE_MS, PROBE_STREAM_GRACE_MS } from '../../../../src/protocols/probe.js';

const q = (s: string) => decodeStreamQuery(new URLSearchParams(s));
const code = (e: unknown) => (e instanceof TorusError ? e.code : String(e));

t.test('stream query: strict, bounded', async (t) => {
  t.same(q(''), { ms: 500, bytes: 256 << 20, streams: 1, session: 'single' });
  t.same(q('ms=300&bytes=1000&streams=4&session=ab_C-9'), { ms: 300, bytes: 1000, streams: 4, session: 'ab_C-9' });
  t.equal(q('ms=999999').ms, MAX_PROBE_MS, 'time clamped to the hard bound');
  t.equal(q('bytes=99999999999').bytes, 1 << 30, 'bytes clamped to the hard bound');
  for (const bad of [
    'streams=9',
    'streams=0',
    'ms=0',
    'ms=-1',
    'ms=1e3',
    'bytes=abc',
    'session=',
    'session=a%20b',
    `session=${'x'.repeat(33)}`,
    'extra=1',
    '__proto__=1',
    'ms=99999999999999999999',
  ]) {
    t.throws(() => q(bad), { code: 'TORUS_API_VALIDATION' }, bad);
  }
});

t.test('response head parsing', async (t) => {
  t.same(parseResponseHead('HTTP/1.1 200 OK\r\nX-Torus-Node-Id: n1\r\nconnection: close'), {
    status: 200,
    headers: { 'x-torus-node-id': 'n1', connection: 'close' },
  });
  t.equal(parseResponseHead('HTTP/1.0 503').status, 503);
  for (const bad of [
    '',
    'garbage',
    'HTTP/2 200 OK',
    'HTTP/1.1 20 OK',
    'HTTP/1.1 200 OK\r\nno colon',
    'HTTP/1.1 200 OK\r\n: empty name',
  ]) {
    t.throws(() => parseResponseHead(bad), { code: 'TORUS_PROTOCOL_INVALID' }, JSON.stringify(bad));
  }
});

async function probeServer(t: { teardown(fn: () => unknown): void }, nodeId = 'node-s'): Promise<number> {
  const handler = createProbeHandler(() => ({ nodeId, clusterName: 'test', incarnation: 1 }), { dataKey: null });
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** A raw client: sends `text`, collects what comes back until close (or `ms`). */
function rawExchange(port: number, text: string | Buffer, ms = 3000): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    const done = (): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(out);
    };
    const timer = setTimeout(done, ms);
    s.on('data', (d) => {
      if (out.length < 4096) out += d.toString('latin1');
    });
    s.on('close', done);
    s.on('error', done);
  });
}

t.test('measures over loopback with 1 and 3 connections; identity is checked', async (t) => {
  const port = await probeServer(t);
  const one = await measureStream('127.0.0.1', port, { durationMs: 150, expectNodeId: 'node-s' });
  t.match(one, { method: 'stream', streams: 1 });
  t.ok(
    one.bytes > 0 && one.bps > 0 && one.steadySeconds > 0,
    `1 stream: ${(one.bps / 1e9).toFixed(2)} Gbit/s over ${one.bytes} bytes`,
  );
  const three = await measureStream('127.0.0.1', port, { durationMs: 150, streams: 3, maxBytes: 48 << 20 });
  t.match(three, { streams: 3 });
  t.ok(three.bytes > 0 && three.bytes <= 48 << 20, `3 streams share the byte bound (${three.bytes} bytes)`);
  const small = await measureStream('127.0.0.1', port, { durationMs: 2000, maxBytes: 3 << 20 });
  t.equal(small.bytes, 3 << 20, 'the byte bound ends the transfer exactly');
  await t.rejects(
    measureStream('127.0.0.1', port, { durationMs: 50, expectNodeId: 'someone-else' }),
    { code: 'TORUS_PROTOCOL_INVALID' },
    'another node answering is refused',
  );
});

t.test('exclusive: a second session is refused while one runs, force overrides, the gate frees itself', async (t) => {
  const port = await probeServer(t);
  // The holder is a raw stream whose first bytes have arrived (the gate is taken before any are sent), so a loaded
  // machine cannot make the check below run before the first session starts or after it ends.
  const holder = net.connect(port, '127.0.0.1', () =>
    holder.write('GET /v1/probe/stream?ms=1500 HTTP/1.1\r\nhost: x\r\n\r\n'),
  );
  holder.on('error', () => undefined);
  t.teardown(() => holder.destroy());
  let held = 0;
  const running = new Promise<number>((resolve) => {
    holder.on('data', (d: Buffer) => {
      held += d.length;
    });
    holder.on('close', () => resolve(held));
  });
  await new Promise<void>((r) => holder.once('data', () => r()));
  await t.rejects(
    measureStream('127.0.0.1', port, { durationMs: 50 }),
    { code: 'TORUS_PROBE_BUSY' },
    'busy while another probe runs',
  );
  const forced = await measureStream('127.0.0.1', port, { durationMs: 50, force: true });
  t.ok(forced.bytes > 0, 'force measures anyway');
  t.ok((await running) > 0, 'the first session completes (the server ends it at its bound)');
  t.ok((await measureStream('127.0.0.1', port, { durationMs: 50 })).bytes > 0, 'free again afterwards');
});

t.test('hostile clients: no crash, never holding the probe past its bound', async (t) => {
  const port = await probeServer(t);
  // A client that asks for a stream and never reads: the server's writes stop draining; it is cut at ms + grace.
  const stalled = net.connect(port, '127.0.0.1', () =>
    stalled.write('GET /v1/probe/stream?ms=200 HTTP/1.1\r\nhost: x\r\n\r\n'),
  );
  stalled.on('error', () => undefined);
  t.teardown(() => stalled.destroy());
  await new Promise<void>((r) =>
    stalled.once('data', () => {
      stalled.pause();
      r();
    }),
  ); // it holds the gate from here
  await t.rejects(
    measureStream('127.0.0.1', port, { durationMs: 50 }),
    { code: 'TORUS_PROBE_BUSY' },
    'the stalled client holds the probe during its bound',
  );
  const t0 = Date.now();
  let freed = false;
  while (!freed && Date.now() - t0 < 200 + PROBE_STREAM_GRACE_MS + 2000) {
    try {
      await measureStream('127.0.0.1', port, { durationMs: 30 });
      freed = true;
    } catch (error) {
      if (code(error) !== 'TORUS_PROBE_BUSY') throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.ok(freed, `the gate is free again ${Date.now() - t0} ms later (bound: 200 ms + ${PROBE_STREAM_GRACE_MS} ms grace)`);

  // The old upload sink: a client that declares a body and never sends it is cut after the idle grace.
  const silent = net.connect(port, '127.0.0.1', () =>
    silent.write('POST /v1/probe/sink HTTP/1.1\r\nhost: x\r\ncontent-length: 100000000\r\n\r\n'),
  );
  silent.on('error', () => undefined);
  t.teardown(() => silent.destroy());
  // No answer comes before the body, so wait until the server has seen the head: the first refusal (bounded).
  let refusedBusy = false;
  for (let i = 0; i < 50 && !refusedBusy; i++) {
    refusedBusy = await measureStream('127.0.0.1', port, { durationMs: 30 }).then(
      () => false,
      (e: unknown) => {
        if (code(e) !== 'TORUS_PROBE_BUSY') throw e;
        return true;
      },
    );
    if (!refusedBusy) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(refusedBusy, 'a silent upload holds the probe for a moment');
  const s0 = Date.now();
  let free = false;
  while (!free && Date.now() - s0 < PROBE_STREAM_GRACE_MS + 2000) {
    free = await measureStream('127.0.0.1', port, { durationMs: 30 }).then(
      () => true,
      (e: unknown) => {
        if (code(e) !== 'TORUS_PROBE_BUSY') throw e;
        return false;
      },
    );
    if (!free) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(
    free,
    `…but not for longer than the idle grace (free ${Date.now() - s0} ms later, grace ${PROBE_STREAM_GRACE_MS} ms)`,
  );

  // A client that resets mid-stream frees the gate at once.
  const reset = net.connect(port, '127.0.0.1', () =>
    reset.write('GET /v1/probe/stream?ms=3000 HTTP/1.1\r\nhost: x\r\n\r\n'),
  );
  reset.on('error', () => undefined);
  await new Promise<void>((r) => reset.once('data', () => r()));
  reset.resetAndDestroy();
  // "At once": well before the stream's 3 s bound or the idle grace could have freed it.
  const r0 = Date.now();
  let afterReset = 0;
  while (afterReset === 0 && Date.now() - r0 < 1000) {
    afterReset = await measureStream('127.0.0.1', port, { durationMs: 30 }).then(
      (r) => r.bytes,
      (e: unknown) => {
        if (code(e) !== 'TORUS_PROBE_BUSY') throw e;
        return 0;
      },
    );
    if (afterReset === 0) await new Promise((r) => setImmediate(r));
  }
  t.ok(afterReset > 0, `a reset client frees the probe at once (${Date.now() - r0} ms)`);

  // Garbage and bad queries: answered or dropped, never a crash.
  t.match(
    await rawExchange(port, 'GET /v1/probe/stream?streams=99 HTTP/1.1\r\nhost: x\r\n\r\n'),
    /^HTTP\/1\.1 400/,
    'bad query → 400',
  );
  t.match(
    await rawExchange(port, 'GET /v1/probe/stream?ms=abc&session=%00 HTTP/1.1\r\nhost: x\r\n\r\n'),
    /^HTTP\/1\.1 400/,
  );
  t.match(
    await rawExchange(port, 'POST /v1/probe/stream HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc'),
    /^HTTP\/1\.1 405/,
    'wrong method: 405, not the probe',
  );
  t.match(
    await rawExchange(port, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))),
    /^(HTTP\/1\.1 400|)/,
    'binary garbage is refused',
  );
  // One session may open at most the connections it declared: a greedy client gets busy for the extra one.
  const greedy = await Promise.all(
    [0, 1, 2].map(() =>
      rawExchange(port, 'GET /v1/probe/stream?ms=400&streams=2&session=greedy HTTP/1.1\r\nhost: x\r\n\r\n', 1500),
    ),
  );
  t.same(
    greedy.map((g) => g.slice(0, 12)).sort(),
    ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 503'],
    'streams=2 admits two connections, not three',
  );
  const ok = await measureStream('127.0.0.1', port, { durationMs: 50, expectNodeId: 'node-s' });
  t.ok(ok.bytes > 0, 'the server still measures after all that');
});

/** A fake peer that answers every connection with `reply(socket)`. */
async function fakeServer(t: { teardown(fn: () => unknown): void }, reply: (s: net.Socket) => void): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.once('data', () => reply(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

t.test('hostile servers cannot hold the prober', async (t) => {
  const cases: [string, (s: net.Socket) => void, string][] = [
    ['garbage status line', (s) => s.end('SSH-2.0-OpenSSH\r\n\r\nxxxx'), 'TORUS_PROTOCOL_INVALID'],
    [
      'endless head',
      (s) => {
        const spam = (): void => {
          if (!s.destroyed && s.write(`x-a: ${'b'.repeat(1000)}\r\n`)) setImmediate(spam);
        };
        s.write('HTTP/1.1 200 OK\r\n');
        spam();
      },
      'TORUS_PROTOCOL_INVALID',
    ],
    ['closes before a head', (s) => s.end('HTTP/1.1 200 OK\r\n'), 'TORUS_PROTOCOL_INVALID'],
    ['wrong status', (s) => s.end('HTTP/1.1 404 Not Found\r\n\r\n'), 'TORUS_PROTOCOL_INVALID'],
    ['busy', (s) => s.end('HTTP/1.1 503 Busy\r\ncontent-length: 2\r\n\r\n{}'), 'TORUS_PROBE_BUSY'],
    [
      'no node id when one is expected',
      (s) => s.end(`HTTP/1.1 200 OK\r\n\r\n${'z'.repeat(1000)}`),
      'TORUS_PROTOCOL_INVALID',
    ],
    [
      'streams past its bounds',
      (s) => {
        const blk = Buffer.alloc(1 << 20);
        s.write('HTTP/1.1 200 OK\r\nx-torus-node-id: n\r\n\r\n');
        const go = (): void => {
          while (!s.destroyed && s.write(blk));
          if (!s.destroyed) s.once('drain', go);
        };
        go();
      },
      'TORUS_PROTOCOL_INVALID',
    ],
    ['never answers', () => undefined, 'TORUS_RING_TIMEOUT'],
  ];
  for (const [name, reply, expected] of cases) {
    const port = await fakeServer(t, reply);
    const t0 = Date.now();
    const err = await measureStream('127.0.0.1', port, {
      durationMs: 100,
      maxBytes: 4 << 20,
      expectNodeId: 'n',
      timeoutMs: 1500,
    }).then(
      () => 'resolved',
      (e: unknown) => code(e),
    );
    t.equal(err, expected, `${name}: ${expected} after ${Date.now() - t0} ms`);
    t.ok(Date.now() - t0 < 2500, `${name}: within the prober's bound`);
  }
});

t.test("a slow link's queued bytes arriving after the time bound are measured, not refused", async (t) => {
  // What a 1–5 Mbit/s link does: the server's writes sit in its buffers and the link's queue and keep arriving
  // seconds after its time bound. Here paced at 8 KiB per 10 ms (~6.5 Mbit/s) and never ending by itself.
  const port = await fakeServer(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nx-torus-node-id: n\r\n\r\n');
    const tick = setInterval(() => (s.destroyed ? clearInterval(tick) : s.write(Buffer.alloc(8192))), 10);
    s.once('close', () => clearInterval(tick));
  });
  const t0 = Date.now();
  const report = await measureStream('127.0.0.1', port, { durationMs: 100, expectNodeId: 'n' });
  const ms = Date.now() - t0;
  t.ok(report.bytes > 0 && report.bps > 0, `rated: ${(report.bps / 1e6).toFixed(1)} Mbit/s over ${report.bytes} B`);
  t.ok(report.seconds * 1000 <= 100 + PROBE_STREAM_GRACE_MS + 50, 'the prober ended the transfer at its bound');
  t.ok(ms < 100 + PROBE_STREAM_GRACE_MS + 3000, `within the overall bound (${ms} ms)`);
});
