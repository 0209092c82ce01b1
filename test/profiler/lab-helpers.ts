/** Helpers for profiler lab tests and the benchmark: start probe servers in lab hosts, run the prober, iperf3. */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Lab } from '../../src/lab/index.js';
import type { ProfiledInterface } from '../../src/native/interfaces.js';
import { childExecArgv } from '../../src/runtime/module-url.js';

export const PROBE_PORT = 7600;
const script = (name: string): string => fileURLToPath(new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

export function lines(child: ChildProcess, onLine: (o: Record<string, unknown>) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (l) => { try { onLine(JSON.parse(l) as Record<string, unknown>); } catch { /* not ours */ } });
    child.once('exit', (code) => (code === 0 || code === null ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

export function firstJson(child: ChildProcess, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('no output in time')), timeoutMs);
    rl.once('line', (l) => { clearTimeout(timer); rl.close(); resolve(JSON.parse(l) as Record<string, unknown>); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code} before output`)); });
  });
}

/** Starts a probe server in every host ("node-<i>"), labelling interfaces; resolves with each host's profile. */
export async function startProbeServers(lab: Lab, labels: Record<string, string> = {}): Promise<ProfiledInterface[][]> {
  const args = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  const children = lab.hosts.map((h) => lab.spawn(h.index, process.execPath, [...childExecArgv(import.meta.url), script('probe-server'), `node-${h.index}`, String(PROBE_PORT), ...args], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const ready = await Promise.all(children.map((c) => firstJson(c, 60_000)));
  return ready.map((r) => r.interfaces as ProfiledInterface[]);
}

export async function runProber(lab: Lab, host: number, job: object): Promise<Record<string, unknown>[]> {
  const child = lab.spawn(host, process.execPath, [...childExecArgv(import.meta.url), script('prober'), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const out: Record<string, unknown>[] = [];
  await lines(child, (o) => out.push(o));
  return out;
}

/** iperf3 receiver-side bits/s from `from` to `to` at `ip` (undefined when iperf3 is not installed). */
export async function iperf3(lab: Lab, from: number, to: number, ip: string, seconds = 2): Promise<number | undefined> {
  try {
    await lab.exec(from, ['iperf3', '--version']);
  } catch {
    return undefined;
  }
  const server = lab.spawn(to, 'iperf3', ['-s', '-1', '-B', ip, '-p', '5301'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  const { stdout } = await lab.exec(from, ['iperf3', '-c', ip, '-p', '5301', '-t', String(seconds), '-J'], { timeoutMs: (seconds + 10) * 1000 });
  server.kill();
  const j = JSON.parse(stdout) as { end?: { sum_received?: { bits_per_second?: number } } };
  return j.end?.sum_received?.bits_per_second;
}
