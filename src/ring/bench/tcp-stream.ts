/**
 * One Node TCP stream, the ceiling the ring is judged against ("unshaped: ≥ 80 % of one Node TCP
 * stream"). Same direction and APIs as a ring connection: the source accepts and writes 1 MiB
 * buffers, the sink dials and reads with a static `onread` buffer.
 *   tcp-stream.js source BIND_IP PORT SECONDS      (prints {"listening":true})
 *   tcp-stream.js sink IP PORT                      (prints {"bitsPerSecond": …} when the source ends)
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const [mode, ip = '0.0.0.0', portText = '5299', secondsText = '2'] = process.argv.slice(2);
const port = Number(portText);

if (mode === 'source') {
  const chunk = Buffer.alloc(1 << 20, 0xab);
  const server = net.createServer((socket) => {
    server.close();
    const until = performance.now() + Number(secondsText) * 1000;
    const pump = () => {
      while (performance.now() < until) if (!socket.write(chunk)) return void socket.once('drain', pump);
      socket.end();
    };
    pump();
    socket.on('error', () => undefined);
  });
  server.listen(port, ip, () => process.stdout.write('{"listening":true}\n'));
} else if (mode === 'sink') {
  let bytes = 0;
  let start = 0;
  const buffer = new Uint8Array(4 << 20);
  const socket = new net.Socket({ onread: { buffer, callback: (nread: number) => { if (bytes === 0) start = performance.now(); bytes += nread; return true; } } } as net.SocketConstructorOpts);
  socket.connect({ host: ip, port, noDelay: true });
  socket.on('end', () => {
    const seconds = (performance.now() - start) / 1000;
    process.stdout.write(JSON.stringify({ bitsPerSecond: seconds > 0 ? (bytes * 8) / seconds : 0, bytes }) + '\n');
    socket.destroy();
  });
  socket.on('error', (error) => { process.stdout.write(JSON.stringify({ error: error.message }) + '\n'); process.exitCode = 1; });
} else {
  process.stderr.write('usage: tcp-stream source BIND_IP PORT SECONDS | sink IP PORT\n');
  process.exitCode = 2;
}
