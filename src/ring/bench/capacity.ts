/**
 * Link capacity beside the ring numbers: iperf3 (one direction and --bidir) and one Node TCP stream
 * between the same two hosts, over the same addresses the ring uses.
 */
import type { ChildProcess } from 'node:child_process';
import { childExecArgv, siblingModule } from '../../runtime/module-url.js';

/** Starts a command on host `host` (inside its namespace in the lab, plainly on loopback). */
export type Spawner = (host: number, command: string, args: string[]) => ChildProcess;

export interface Capacity {
  /** iperf3 single stream, receiver side, bits/s. */
  readonly iperfOneWay: number | null;
  /** iperf3 --bidir, both directions added, bits/s. */
  readonly iperfBidir: number | null;
  /** One Node TCP stream (1 MiB writes, onread receiver), bits/s. */
  readonly nodeStream: number | null;
}

function collect(child: ChildProcess, timeoutMs: number, until?: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    // Waiting for a readiness line gives up quietly (the caller kills the server); a run that overstays is killed.
    const timer = setTimeout(() => { if (!until) child.kill('SIGKILL'); resolve(out); }, timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (until?.test(out)) { clearTimeout(timer); resolve(out); }
    });
    child.once('exit', () => { clearTimeout(timer); resolve(out); });
    child.once('error', () => { clearTimeout(timer); resolve(out); });
  });
}

async function iperf(spawn: Spawner, from: number, to: number, ip: string, port: number, seconds: number, bidir: boolean): Promise<number | null> {
  const server = spawn(to, 'iperf3', ['-s', '-1', '-B', ip, '-p', String(port), '--forceflush']);
  try {
    await collect(server, 5000, /Server listening/);
    const args = ['-c', ip, '-p', String(port), '-t', String(seconds), '-J', ...(bidir ? ['--bidir'] : [])];
    const out = await collect(spawn(from, 'iperf3', args), (seconds + 10) * 1000);
    const end = (JSON.parse(out) as { end?: Record<string, { bits_per_second?: number } | undefined> }).end ?? {};
    const one = end.sum_received?.bits_per_second;
    if (one === undefined) return null;
    return bidir ? one + (end.sum_received_bidir_reverse?.bits_per_second ?? 0) : one;
  } catch {
    return null;
  } finally {
    server.kill('SIGKILL');
  }
}

async function nodeStream(spawn: Spawner, from: number, to: number, ip: string, port: number, seconds: number): Promise<number | null> {
  const entry = siblingModule(import.meta.url, './tcp-stream').pathname;
  const exec = childExecArgv(import.meta.url);
  // The ring's direction: the sending side accepts, the receiving side dials and reads.
  const source = spawn(from, process.execPath, [...exec, entry, 'source', '0.0.0.0', String(port), String(seconds)]);
  try {
    await collect(source, 10_000, /listening/);
    const out = await collect(spawn(to, process.execPath, [...exec, entry, 'sink', ip, String(port)]), (seconds + 15) * 1000);
    const value = (JSON.parse(out.trim().split('\n').pop() ?? '{}') as { bitsPerSecond?: number }).bitsPerSecond;
    return typeof value === 'number' ? value : null;
  } catch {
    return null;
  } finally {
    source.kill('SIGKILL');
  }
}

/**
 * Capacity of the link from host `from` to host `to`, where `toIp` is `to`'s address as `from` reaches it
 * and `fromIp` the reverse (the Node stream's sink dials the sender, like a ring rank dials its neighbour).
 */
export async function measureCapacity(spawn: Spawner, link: { from: number; to: number; toIp: string; fromIp: string }, seconds: number, port: number): Promise<Capacity> {
  const iperfOneWay = await iperf(spawn, link.from, link.to, link.toIp, port, seconds, false);
  const iperfBidir = await iperf(spawn, link.from, link.to, link.toIp, port + 1, seconds, true);
  const node = await nodeStream(spawn, link.from, link.to, link.fromIp, port + 2, seconds);
  return { iperfOneWay, iperfBidir, nodeStream: node };
}
