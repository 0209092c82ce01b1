/**
 * The chunk client (src/artifacts/chunk-client.ts) against scripted raw HTTP servers on loopback: bodies land in the
 * caller's buffer in one piece or many, connections are kept and reused, a kept connection the server closed is
 * retried once, and every malformed or hostile answer fails the request (and only it) with a clear error.
 */
import t from 'tap';
import { createServer, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { ChunkClient } from '../../src/artifacts/chunk-client.js';
import { TorusError } from '../../src/protocols/errors.js';

type Script = (socket: Socket, request: string, n: number) => void;

/** A server that hands every complete request head (and its index on the connection) to `script`. */
async function rawServer(
  t: { teardown(fn: () => void): void },
  script: Script,
): Promise<{ port: number; connections: () => number; server: Server }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = '';
    let n = 0;
    socket.on('data', (d) => {
      buffered += d.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        script(socket, head, n++);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, connections: () => connections, server };
}

const ok = (body: Buffer, extra = ''): Buffer =>
  Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${body.length}\r\n${extra}\r\n`,
      'latin1',
    ),
    body,
  ]);

function get(
  client: ChunkClient,
  port: number,
  o: { path?: string; timeoutMs?: number; maxBody?: number; buffers?: Buffer[] } = {},
): Promise<Buffer> {
  return client.get({
    host: '127.0.0.1',
    port,
    path: o.path ?? '/c',
    headers: { 'x-torus-artifact-proof': '1.ab' },
    timeoutMs: o.timeoutMs ?? 5000,
    maxBody: o.maxBody ?? 1 << 20,
    bodyBuffer: (length) => {
      const b = Buffer.alloc(length);
      o.buffers?.push(b);
      return b;
    },
  });
}

t.test(
  "a body sent in one piece, in many small pieces, and with the head lands whole in the caller's buffer",
  async (t) => {
    const body = randomBytes(300_000);
    let heads: string[] = [];
    const { port, connections } = await rawServer(t, (socket, head, n) => {
      heads.push(head);
      const answer = ok(body);
      if (n === 0) {
        socket.write(answer);
        return;
      }
      // n === 1: 1000-byte pieces, one per tick (many reads, one split inside the head)
      let at = 0;
      const next = (): void => {
        if (at >= answer.length) return;
        socket.write(answer.subarray(at, at + 1000));
        at += 1000;
        setImmediate(next);
      };
      next();
    });
    const client = new ChunkClient();
    t.teardown(() => client.close());
    const buffers: Buffer[] = [];
    const a = await get(client, port, { path: '/v1/x?waitMs=0', buffers });
    t.ok(a.equals(body), 'one piece');
    t.equal(a, buffers[0], 'the body is the buffer bodyBuffer gave, not a copy');
    const b = await get(client, port, { buffers });
    t.ok(b.equals(body), 'many pieces');
    t.equal(connections(), 1, 'the connection was kept and reused');
    t.match(
      heads[0],
      /^GET \/v1\/x\?waitMs=0 HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\nx-torus-artifact-proof: 1\.ab$/,
      'request line, host and the proof header',
    );
    heads = [];
  },
);

t.test("an error answer becomes the peer's TorusError; the connection stays usable", async (t) => {
  const error = Buffer.from(
    JSON.stringify({
      error: { code: 'TORUS_ARTIFACT_UNAVAILABLE', message: 'chunk 3 is not here (yet)', details: {} },
    }),
  );
  const { port, connections } = await rawServer(t, (socket, _head, n) => {
    socket.write(
      n === 0
        ? Buffer.concat([Buffer.from(`HTTP/1.1 404 Not Found\r\ncontent-length: ${error.length}\r\n\r\n`), error])
        : ok(Buffer.from('fine')),
    );
  });
  const client = new ChunkClient();
  t.teardown(() => client.close());
  await t.rejects(get(client, port), { code: 'TORUS_ARTIFACT_UNAVAILABLE', message: 'chunk 3 is not here (yet)' });
  t.equal((await get(client, port)).toString(), 'fine');
  t.equal(connections(), 1);
});

t.test('a kept connection the server closed is retried once on a new one', async (t) => {
  const { port, connections } = await rawServer(t, (socket, _head, n) => {
    if (n === 0) socket.write(ok(Buffer.from('first')));
    else socket.destroy(); // the second request on this connection: closed without an answer (idle timeout race)
  });
  const client = new ChunkClient();
  t.teardown(() => client.close());
  t.equal((await get(client, port)).toString(), 'first');
  t.equal((await get(client, port)).toString(), 'first', 'answered on a fresh connection');
  t.equal(connections(), 2);
});

t.test('hostile or malformed answers fail only that request, with a clear error', async (t) => {
  const cases: [string, Buffer | ((s: Socket) => void), RegExp][] = [
    ['no status line', Buffer.from('SSH-2.0-x\r\n\r\n'), /no HTTP\/1\.1 status line/],
    [
      'chunked encoding',
      Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n'),
      /transfer-encoding/,
    ],
    ['no content-length', Buffer.from('HTTP/1.1 200 OK\r\n\r\nabcd'), /no content-length/],
    ['a bad content-length', Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n'), /bad content-length/],
    [
      'two different content-lengths',
      Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 4\r\ncontent-length: 5\r\n\r\nabcd'),
      /bad content-length/,
    ],
    ['a body over the limit', Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${(1 << 20) + 1}\r\n\r\n`), /too large/],
    [
      'more bytes than announced with the head',
      Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nabcd'),
      /more bytes than announced/,
    ],
    ['endless headers', Buffer.from(`HTTP/1.1 200 OK\r\n${'x-a: b\r\n'.repeat(4000)}`), /headers too large/],
    [
      'a malformed header',
      Buffer.from('HTTP/1.1 200 OK\r\nno colon here\r\ncontent-length: 0\r\n\r\n'),
      /malformed header/,
    ],
    [
      'a body cut short',
      (s) => {
        s.end(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
      },
      /connection closed|ECONNRESET/,
    ],
    ['no answer in time', () => {}, /no answer in 300 ms/],
  ];
  for (const [name, answer, why] of cases) {
    const { port } = await rawServer(t, (socket) =>
      typeof answer === 'function' ? answer(socket) : socket.write(answer),
    );
    const client = new ChunkClient();
    try {
      const error = await get(client, port, { timeoutMs: 300 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      t.ok(
        error instanceof TorusError && error.code === 'TORUS_API_UNREACHABLE' && why.test(error.message),
        `${name}: ${(error as Error | undefined)?.message}`,
      );
    } finally {
      client.close();
    }
  }
});

t.test('bytes arriving on an idle connection close it; the next request gets a fresh one', async (t) => {
  const { port, connections } = await rawServer(t, (socket) => {
    socket.write(ok(Buffer.from('one')));
    setTimeout(() => socket.write('junk'), 20); // unasked-for bytes after the answer
  });
  const client = new ChunkClient();
  t.teardown(() => client.close());
  t.equal((await get(client, port)).toString(), 'one');
  await new Promise((r) => setTimeout(r, 200));
  t.equal((await get(client, port)).toString(), 'one');
  t.equal(connections(), 2, 'the junk-sending connection was not reused');
});

t.test('close() ends busy connections too: a waiting request fails at once', async (t) => {
  const { port } = await rawServer(t, () => {}); // never answers
  const client = new ChunkClient();
  const pending = get(client, port, { timeoutMs: 60_000 });
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now();
  client.close();
  await t.rejects(pending, { code: 'TORUS_API_UNREACHABLE', message: /the client closed/ });
  t.ok(Date.now() - t0 < 5000, 'without waiting for the 60 s timeout');
  await t.rejects(get(client, port), { message: /the client closed/ }, 'no request after close');
});

t.test('an unreachable peer fails with the cause', async (t) => {
  const { port, server } = await rawServer(t, () => {});
  await new Promise((r) => server.close(r));
  const client = new ChunkClient();
  t.teardown(() => client.close());
  await t.rejects(get(client, port), { code: 'TORUS_API_UNREACHABLE', message: /ECONNREFUSED/ });
});

t.test('a run: each piece lands whole in its own buffer, in order, however the bytes arrive', async (t) => {
  const pieces = [70_000, 5, 130_000, 1];
  const body = randomBytes(pieces.reduce((a, b) => a + b, 0));
  const { port, connections } = await rawServer(t, (socket, _head, n) => {
    const answer = ok(body);
    if (n === 0) {
      socket.write(answer); // with the head: the first read spans several pieces
      return;
    }
    let at = 0;
    const next = (): void => {
      if (at >= answer.length) return;
      socket.write(answer.subarray(at, at + 777));
      at += 777;
      setImmediate(next);
    };
    next();
  });
  const client = new ChunkClient();
  t.teardown(() => client.close());
  for (const how of ['one write', 'small writes']) {
    const got: [number, Buffer][] = [];
    await client.getRun({
      host: '127.0.0.1',
      port,
      path: '/r',
      headers: {},
      timeoutMs: 5000,
      pieces,
      bodyBuffer: (length) => Buffer.alloc(length),
      onPiece: (k, b) => got.push([k, b]),
    });
    t.same(
      got.map(([k, b]) => [k, b.length]),
      pieces.map((l, k) => [k, l]),
      `${how}: every piece, in order, its own buffer`,
    );
    t.ok(Buffer.concat(got.map(([, b]) => b)).equals(body), `${how}: the bytes`);
  }
  t.equal(connections(), 1, 'the connection was kept');
});

t.test('a run cut short hands over the whole pieces, then fails; a wrong length fails before any', async (t) => {
  const pieces = [1000, 1000, 1000];
  const body = randomBytes(3000);
  const run = (port: number, got: number[]) =>
    new ChunkClient().getRun({
      host: '127.0.0.1',
      port,
      path: '/r',
      headers: {},
      timeoutMs: 2000,
      pieces,
      bodyBuffer: (length) => Buffer.alloc(length),
      onPiece: (k) => got.push(k),
    });
  const cut = await rawServer(t, (socket) => socket.end(ok(body).subarray(0, ok(body).length - 1500)));
  const got: number[] = [];
  await t.rejects(run(cut.port, got), { code: 'TORUS_API_UNREACHABLE' });
  t.same(got, [0], 'the one whole piece, not the half one');
  const wrong = await rawServer(t, (socket) => socket.write(ok(body.subarray(0, 2999))));
  const none: number[] = [];
  await t.rejects(run(wrong.port, none), { code: 'TORUS_API_UNREACHABLE', message: /not the run's 3000 bytes/ });
  t.same(none, [], 'nothing handed over');
});
