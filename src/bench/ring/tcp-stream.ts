/**
 * One Node TCP stream, the ceiling the ring is judged against ("unshaped: ≥ 80 % of one Node TCP
 * stream"). Same direction and APIs as a ring connection: the source accepts and writes 1 MiB
 * buffers, the sink dials and reads with a static `onread` buffer.
 *   tcp-stream.js source BIND_IP PORT SECONDS      (prints {"listening":true}, then its CPU use at the end)
 *   tcp-stream.js sink IP PORT                      (prints {"bitsPerSecond": …} when the source ends)
 *   tcp-stream.js ring BIND_IP PORT SECONDS LEFT_IP LEFT_PORT START_AT_MS  (source and sink at once: one
 *       rank of a ring of raw streams — what the ring's traffic costs without the ring; every host starts
 *       sending at the same wall-clock time, so the streams overlap for the whole measurement)
 * Every result line carries the process's CPU seconds (user + system) and the seconds it measured over.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const [
  mode,
  ip = '0.0.0.0',
  portText = '5299',
  secondsText = '2',
  leftIp = '',
  leftPortText = portText,
  startAtText = '0',
] = process.argv.slice(2);
const port = Number(portText);
const cpuStart = process.cpuUsage();
const cpuSeconds = () => {
  const u = process.cpuUsage(cpuStart);
  return (u.user + u.system) / 1e6;
};
const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Accepts one connection and writes 1 MiB buffers to it for `seconds` (from `startAt`, epoch ms, if given). */
function source(
  bindIp: string,
  seconds: number,
  onListening: () => void,
  onDone: (sentBytes: number) => void,
  startAt = 0,
): void {
  const chunk = Buffer.alloc(1 << 20, 0xab);
  let sent = 0;
  const server = net.createServer((socket) => {
    server.close();
    const delay = Math.max(0, startAt - Date.now());
    const until = performance.now() + delay + seconds * 1000;
    const pump = () => {
      while (performance.now() < until) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      socket.end(() => onDone(sent));
    };
    setTimeout(pump, delay);
    socket.on('error', () => undefined);
  });
  server.listen(port, bindIp, onListening);
}

/** Dials `peerIp` (retrying while it is not listening yet) and counts bytes read with a static onread buffer. */
function sink(
  peerIp: string,
  peerPort: number,
  onDone: (result: { bitsPerSecond: number; bytes: number; seconds: number } | { error: string }) => void,
): void {
  let bytes = 0;
  let start = 0;
  const buffer = new Uint8Array(4 << 20);
  let attempts = 0;
  const attempt = () => {
    const socket = new net.Socket({
      onread: {
        buffer,
        callback: (nread: number) => {
          if (bytes === 0) start = performance.now();
          bytes += nread;
          return true;
        },
      },
    } as net.SocketConstructorOpts);
    socket.connect({ host: peerIp, port: peerPort, noDelay: true });
    socket.on('end', () => {
      const seconds = (performance.now() - start) / 1000;
      socket.destroy();
      onDone({ bitsPerSecond: seconds > 0 ? (bytes * 8) / seconds : 0, bytes, seconds });
    });
    socket.on('error', (error) => {
      socket.destroy();
      if (bytes === 0 && ++attempts < 400)
        setTimeout(attempt, 50); // the peer may still be starting
      else onDone({ error: error.message });
    });
  };
  attempt();
}

if (mode === 'source') {
  source(
    ip,
    Number(secondsText),
    () => say({ listening: true }),
    (sentBytes) => say({ sentBytes, cpuSeconds: cpuSeconds() }),
  );
} else if (mode === 'sink') {
  sink(ip, port, (result) => {
    say({ ...result, cpuSeconds: cpuSeconds() });
    if ('error' in result) process.exitCode = 1;
  });
} else if (mode === 'ring') {
  // Both halves in one process and one event loop, like a ring rank; exits when both are done.
  let received: object | null = null;
  let sentBytes: number | null = null;
  const finish = () => {
    if (received && sentBytes !== null) say({ ...received, sentBytes, cpuSeconds: cpuSeconds() });
  };
  source(
    ip,
    Number(secondsText),
    () =>
      sink(leftIp, Number(leftPortText), (result) => {
        received = result;
        finish();
      }),
    (sent) => {
      sentBytes = sent;
      finish();
    },
    Number(startAtText),
  );
} else {
  process.stderr.write(
    'usage: tcp-stream source BIND_IP PORT SECONDS | sink IP PORT | ring BIND_IP PORT SECONDS LEFT_IP LEFT_PORT START_AT_MS\n',
  );
  process.exitCode = 2;
}
