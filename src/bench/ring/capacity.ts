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
  /** CPU time of that stream's sender and receiver per MiB moved, µs (what one byte costs each end). */
  readonly nodeStreamCpu?: { readonly sourceUsPerMiB: number; readonly sinkUsPerMiB: number } | null;
  /** The same one-stream probe repeated after the ring variants ran (ratios use the better of the two). */
  readonly nodeStreamAfter?: number | null;
  /**
   * A ring of raw Node streams over the ring's own addresses: every host sends to its right neighbour
   * and reads from its left one at once, one process each, no collective — the ring's traffic pattern
   * at zero engine cost. bits/s received per host (mean and slowest) and CPU per MiB sent + received.
   */
  readonly streamRing?: StreamRing | null;
}

export interface StreamRing {
  readonly hosts: number;
  readonly meanBitsPerSecond: number;
  readonly minBitsPerSecond: number;
  readonly cpuUsPerMiB: number;
}

const MiB = 1024 * 1024;

function collect(child: ChildProcess, timeoutMs: number, until?: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    // Waiting for a readiness line gives up quietly (the caller kills the server); a run that overstays is killed.
    const timer = setTimeout(() => {
      if (!until) child.kill('SIGKILL');
      resolve(out);
    }, timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (until?.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(out);
    });
    child.once('error', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

async function iperf(
  spawn: Spawner,
  from: number,
  to: number,
  ip: string,
  port: number,
  seconds: number,
  bidir: boolean,
): Promise<number | null> {
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

const lastJson = (out: string): Record<string, unknown> =>
  JSON.parse(out.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export async function nodeStream(
  spawn: Spawner,
  from: number,
  to: number,
  ip: string,
  port: number,
  seconds: number,
): Promise<{ bitsPerSecond: number | null; cpu: Capacity['nodeStreamCpu'] }> {
  const entry = siblingModule(import.meta.url, './tcp-stream').pathname;
  const exec = childExecArgv(import.meta.url);
  // The ring's direction: the sending side accepts, the receiving side dials and reads.
  const source = spawn(from, process.execPath, [...exec, entry, 'source', '0.0.0.0', String(port), String(seconds)]);
  try {
    const sourceDone = collect(source, (seconds + 20) * 1000, /cpuSeconds/);
    if (!/listening/.test(await Promise.race([collect(source, 10_000, /listening/), sourceDone])))
      return { bitsPerSecond: null, cpu: null };
    const got = lastJson(
      await collect(spawn(to, process.execPath, [...exec, entry, 'sink', ip, String(port)]), (seconds + 15) * 1000),
    );
    const sent = lastJson(await sourceDone);
    const bytes = num(got.bytes);
    const sourceCpu = num(sent.cpuSeconds);
    const sinkCpu = num(got.cpuSeconds);
    const cpu =
      bytes && sourceCpu !== null && sinkCpu !== null
        ? { sourceUsPerMiB: (sourceCpu * 1e6) / (bytes / MiB), sinkUsPerMiB: (sinkCpu * 1e6) / (bytes / MiB) }
        : null;
    return { bitsPerSecond: num(got.bitsPerSecond), cpu };
  } catch {
    return { bitsPerSecond: null, cpu: null };
  } finally {
    source.kill('SIGKILL');
  }
}

/**
 * A ring of raw Node streams: host i listens on `portOf(i)` (host i+1 dials it and reads) and dials
 * `leftIp(i)` to read from host i−1, all at once for `seconds`. See Capacity.streamRing.
 */
export async function measureStreamRing(
  spawn: Spawner,
  hosts: number,
  leftIp: (host: number) => string,
  seconds: number,
  portOf: (host: number) => number,
): Promise<StreamRing | null> {
  const entry = siblingModule(import.meta.url, './tcp-stream').pathname;
  const exec = childExecArgv(import.meta.url);
  // A common start, late enough for every process to be up and connected (slow on a busy machine).
  const startAt = Date.now() + 3000;
  const children = Array.from({ length: hosts }, (_, i) =>
    spawn(i, process.execPath, [
      ...exec,
      entry,
      'ring',
      '0.0.0.0',
      String(portOf(i)),
      String(seconds),
      leftIp(i),
      String(portOf((i - 1 + hosts) % hosts)),
      String(startAt),
    ]),
  );
  try {
    const outs = await Promise.all(children.map((child) => collect(child, (seconds + 20) * 1000)));
    const results = outs.map(lastJson);
    const rates = results.map((r) => num(r.bitsPerSecond));
    if (rates.some((r) => r === null || r === 0)) return null;
    const perMiB = results.map(
      (r) => ((num(r.cpuSeconds) ?? 0) * 1e6) / (((num(r.bytes) ?? 0) + (num(r.sentBytes) ?? 0)) / MiB),
    );
    const values = rates as number[];
    return {
      hosts,
      meanBitsPerSecond: values.reduce((a, b) => a + b, 0) / hosts,
      minBitsPerSecond: Math.min(...values),
      cpuUsPerMiB: perMiB.reduce((a, b) => a + b, 0) / hosts,
    };
  } catch {
    return null;
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}

/**
 * Capacity of the link from host `from` to host `to`, where `toIp` is `to`'s address as `from` reaches it
 * and `fromIp` the reverse (the Node stream's sink dials the sender, like a ring rank dials its neighbour).
 */
export async function measureCapacity(
  spawn: Spawner,
  link: { from: number; to: number; toIp: string; fromIp: string },
  seconds: number,
  port: number,
): Promise<Capacity> {
  const iperfOneWay = await iperf(spawn, link.from, link.to, link.toIp, port, seconds, false);
  const iperfBidir = await iperf(spawn, link.from, link.to, link.toIp, port + 1, seconds, true);
  const node = await nodeStream(spawn, link.from, link.to, link.fromIp, port + 2, seconds);
  return { iperfOneWay, iperfBidir, nodeStream: node.bitsPerSecond, nodeStreamCpu: node.cpu };
}
