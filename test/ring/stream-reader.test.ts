/** StreamReader over a real socket: zero-copy targets, the stash for early bytes, pause/resume past the stash limit. */
import net from 'node:net';
import t from 'tap';
import { StreamReader } from '../../src/ring/stream-reader.js';

async function pair(maxStash: number): Promise<{ reader: StreamReader; source: net.Socket; close: () => void }> {
  const faults: unknown[] = [];
  const reader = new StreamReader((e) => faults.push(e), maxStash);
  const server = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const socket = new net.Socket({ onread: reader.onread() } as net.SocketConstructorOpts);
  reader.attach(socket);
  socket.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const source = await accepted;
  return {
    reader,
    source,
    close: () => {
      socket.destroy();
      source.destroy();
      server.close();
    },
  };
}

const pattern = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

t.test('targets posted before the data fill in order, including zero-length ones', async (t) => {
  const { reader, source, close } = await pair(1 << 20);
  t.teardown(close);
  const data = pattern(300_000, 1);
  const a = new Uint8Array(10),
    b = new Uint8Array(0),
    c = new Uint8Array(299_990);
  const order: string[] = [];
  await new Promise<void>((resolve) => {
    reader.expect(a, () => order.push('a'));
    reader.expect(b, () => order.push('b'));
    reader.expect(c, () => {
      order.push('c');
      resolve();
    });
    source.write(data);
  });
  t.same(order, ['a', 'b', 'c']);
  t.same(Buffer.concat([a, c]), Buffer.from(data));
  t.equal(reader.pending, 0);
  t.equal(reader.bytesRead, 300_000);
  // Node picks the buffer of the next read right after the previous one (here: at connect, before any
  // target), so the first read after idle lands in the 64 KiB spare; everything after it goes in place.
  t.ok(reader.bytesCopied <= 64 * 1024, `at most the first read is copied (${reader.bytesCopied} B of 300000)`);
});

t.test(
  'bytes that arrive early are stashed; past the limit the socket pauses, then resumes and nothing is lost',
  async (t) => {
    const { reader, source, close } = await pair(256 * 1024);
    t.teardown(close);
    const total = 32 * 1024 * 1024; // well above what the kernel socket buffers can absorb
    const data = pattern(total, 7);
    source.write(data);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the reader stashes until it pauses
    t.ok(source.writableLength > 0, 'back-pressure reached the sender (reader paused)');
    const target = new Uint8Array(total);
    const parts = 16;
    await new Promise<void>((resolve) => {
      for (let p = 0; p < parts; p++)
        reader.expect(
          target.subarray((p * total) / parts, ((p + 1) * total) / parts),
          p === parts - 1 ? resolve : () => undefined,
        );
    });
    t.ok(Buffer.from(target).equals(Buffer.from(data)), 'all 32 MiB arrive intact and in order');
    t.ok(
      reader.bytesCopied > 64 * 1024 && reader.bytesCopied < total,
      `early bytes were copied out of the stash (${reader.bytesCopied}), the rest read in place`,
    );
  },
);
