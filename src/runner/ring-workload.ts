/**
 * `ring` workload: rank r listens at its own hostfile entry, dials its right neighbour at the planned
 * address and accepts its left neighbour, each connection opened with a hello naming the dialer's rank
 * (a stray connection is refused). Tasks: `barrier` (two token passes round the ring: gather, then
 * release), reporting its time. The collective data path comes from src/ring when it lands.
 */
import net from 'node:net';
import { TorusError } from '../core/errors.js';
import { parseHostPort, ringNeighbours } from '../protocols/hostfile.js';
import type { RunnerStartConfig } from '../protocols/runner.js';
import { abortPromise, type RunnerWorkload } from './workload.js';

const MAGIC = 0x54525247; // "TRRG"
const RETRY_MS = 100;

/** A byte stream of one-byte tokens with awaitable reads. */
class TokenReader {
  #tokens: number[] = [];
  #waiters: { resolve: (t: number) => void; reject: (e: unknown) => void }[] = [];
  #error: unknown = null;
  push(bytes: Buffer): void {
    for (const b of bytes) {
      const w = this.#waiters.shift();
      if (w) w.resolve(b);
      else this.#tokens.push(b);
    }
  }
  fail(error: unknown): void {
    this.#error = error;
    for (const w of this.#waiters.splice(0)) w.reject(error);
  }
  next(): Promise<number> {
    const t = this.#tokens.shift();
    if (t !== undefined) return Promise.resolve(t);
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }
}

export function ringWorkload(config: RunnerStartConfig, diagnostic: (message: string) => void): RunnerWorkload {
  const { rank, worldSize } = config;
  const { left, right } = ringNeighbours(rank, worldSize);
  let server: net.Server | undefined;
  let toRight: net.Socket | undefined;
  let fromLeft: net.Socket | undefined;
  const reader = new TokenReader();
  const sockets = new Set<net.Socket>();

  const lost = (side: string) => (): void => reader.fail(new TorusError('TORUS_RING_PEER_LOST', `lost ${side} neighbour`, { side }));

  async function dialRight(signal: AbortSignal): Promise<net.Socket> {
    const target = parseHostPort(config.hosts[right] ?? '', `hosts[${right}]`);
    for (;;) {
      signal.throwIfAborted();
      const socket = await new Promise<net.Socket | undefined>((resolve) => {
        const s = net.connect({ host: target.ip, port: target.port });
        s.once('connect', () => resolve(s));
        s.once('error', () => { s.destroy(); resolve(undefined); });
      });
      if (socket) {
        const hello = Buffer.alloc(8);
        hello.writeUInt32BE(MAGIC, 0);
        hello.writeUInt32BE(rank, 4);
        socket.write(hello);
        socket.setNoDelay(true);
        return socket;
      }
      await Promise.race([new Promise((r) => setTimeout(r, RETRY_MS)), abortPromise(signal)]);
    }
  }

  function acceptLeft(srv: net.Server): Promise<net.Socket> {
    return new Promise((resolve) => {
      srv.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        socket.once('readable', function check() {
          const hello = socket.read(8) as Buffer | null;
          if (!hello) return socket.once('readable', check);
          if (hello.readUInt32BE(0) !== MAGIC || hello.readUInt32BE(4) !== left || fromLeft) {
            diagnostic(`refused a ring connection (hello rank ${hello.readUInt32BE(4)}, expected ${left})`);
            socket.destroy();
            return;
          }
          fromLeft = socket;
          socket.on('data', (b: Buffer) => reader.push(b));
          socket.once('close', lost('left'));
          resolve(socket);
        });
      });
    });
  }

  const pass = async (): Promise<void> => {
    if (rank === 0) {
      toRight!.write(Buffer.from([1]));
      await reader.next();
    } else {
      await reader.next();
      toRight!.write(Buffer.from([1]));
    }
  };

  return {
    async connect(signal) {
      if (worldSize === 1) return;
      const own = parseHostPort(config.hosts[rank] ?? '', `hosts[${rank}]`);
      server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(own.port, own.ip, () => resolve());
      });
      const accepted = acceptLeft(server);
      toRight = await dialRight(signal);
      sockets.add(toRight);
      toRight.once('close', lost('right'));
      toRight.on('error', () => {});
      await Promise.race([accepted, abortPromise(signal)]);
    },
    async load(report) {
      report(config.layerEnd - config.layerStart);
    },
    async warmup(signal) {
      if (worldSize > 1) await Promise.race([pass(), abortPromise(signal)]);
    },
    async run(op, _params, signal) {
      if (op !== 'barrier') throw new TorusError('TORUS_RUNNER_FAILED', `ring runner: unknown op ${op}`);
      const started = performance.now();
      if (worldSize > 1) {
        await Promise.race([pass(), abortPromise(signal)]);
        await Promise.race([pass(), abortPromise(signal)]);
      }
      return { op, worldSize, durationMs: Math.round((performance.now() - started) * 1000) / 1000 };
    },
    async close() {
      for (const s of sockets) s.destroy();
      toRight?.destroy();
      fromLeft?.destroy();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
}
