/**
 * Artifact transfer benchmark (issue 15) on a 4-node lab LAN (each host shaped to --rate, default 1gbit):
 *   - the link's raw capacity: iperf3 when installed, else a raw Node TCP stream of the same bytes
 *   - one transfer h0 → h1 (the real data path: peer routes, HMAC proof, SHA-256 verification, fdatasync'd writes)
 *   - a sequential copy from h0 to h1, h2, h3 in turn (what a user does today with scp/rsync)
 *   - a broadcast chain h0 → h1 → h2 → h3 (each node serves chunks as soon as it has verified them)
 * side by side in one run.   node build/benchmarks/artifacts/index.js [--size MiB] [--rate 1gbit] [--quick] [--json]
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, writeSync, closeSync, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { printTable, type BenchRow } from '../table.js';

const args = process.argv.slice(2);
/** `--name value` or `--name=value` (the form `npm run bench -- artifacts --size=64` passes through). */
const flag = (name: string): string | undefined => {
  const eq = args.find((a) => a.startsWith(`${name}=`));
  if (eq) return eq.slice(name.length + 1);
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const json = args.includes('--json');
const sizeMiB = Number(flag('--size') ?? (args.includes('--quick') ? 64 : 256));
const rate = flag('--rate') ?? '1gbit';
const PORT = 52600;
const HOSTS = 4;

class Agent {
  readonly #waiters: ((m: any) => boolean)[] = [];
  constructor(readonly id: string, readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let m: any;
      try { m = JSON.parse(line); } catch { return; }
      const i = this.#waiters.findIndex((w) => w(m));
      if (i >= 0) this.#waiters.splice(i, 1);
    });
  }
  send(o: unknown): void { this.child.stdin!.write(JSON.stringify(o) + '\n'); }
  next<T>(match: (m: any) => boolean, ms = 600_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agent ${this.id}: timed out`)), ms);
      this.#waiters.push((m) => { if (!match(m)) return false; clearTimeout(timer); resolve(m as T); return true; });
    });
  }
}

/** TORUS_BENCH_PROFILE=DIR: V8 CPU profiles of the agents (h0 serves, the others receive) into DIR. */
const profile = (host: number): string[] => (process.env.TORUS_BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.TORUS_BENCH_PROFILE, '--cpu-prof-name', `h${host}.cpuprofile`] : []);

interface Done { done: string; ms: number; state: string; error?: { message: string } }

async function main(): Promise<void> {
  const why = Lab.unavailableReason();
  if (why) { process.stderr.write(`artifacts benchmark skipped: ${why}\n`); return; }
  const agentJs = fileURLToPath(new URL('../../src/artifacts/standalone.js', import.meta.url));
  const tmp = mkdtempSync(join(tmpdir(), 'torus-bench-art-'));
  const lab = await Lab.create({ hosts: HOSTS, lanRate: rate });
  try {
    const nodes = lab.hosts.map((h) => ({ id: `h${h.index}`, ip: h.lanIp }));
    const key = randomBytes(32).toString('hex');
    const agents = lab.hosts.map((h) => new Agent(`h${h.index}`, lab.spawn(h.index, process.execPath, [...profile(h.index), agentJs, JSON.stringify({ nodeId: `h${h.index}`, dataDir: join(tmp, `h${h.index}`), port: PORT, key, nodes })])));
    await Promise.all(agents.map((a) => a.next((m) => m.ready)));
    const file = join(tmp, 'weights.bin');
    const fd = openSync(file, 'w');
    for (let i = 0; i < sizeMiB; i++) writeSync(fd, randomBytes(1 << 20));
    closeSync(fd);
    const [a0, a1, a2, a3] = agents as [Agent, Agent, Agent, Agent];
    a0.send({ cmd: 'add', path: file });
    const art = await a0.next<{ id: string; bytes: number; chunks: number }>((m) => m.id !== undefined || m.error);
    for (const a of agents) a.send({ cmd: 'held', event: { type: 'ArtifactHeld', nodeId: 'h0', artifactId: art.id, name: 'bench', bytes: art.bytes, chunks: art.chunks, have: art.chunks } });
    const bytes = art.bytes;
    const fetchOn = async (a: Agent, upstream?: string): Promise<Done> => {
      a.send({ cmd: 'fetch', id: art.id, ...(upstream ? { upstream } : {}) });
      const d = await a.next<Done>((m) => m.done === art.id || m.refused === art.id || m.error);
      if (d.state !== 'complete') throw new Error(`${a.id}: ${d.error?.message ?? JSON.stringify(d)}`);
      return d;
    };
    const rm = async (a: Agent): Promise<void> => { a.send({ cmd: 'rm', id: art.id }); await a.next((m) => m.removed === art.id || m.error); };
    const rows: BenchRow[] = [];
    const gbps = (b: number, s: number) => +((b * 8) / s / 1e9).toFixed(3);

    const raw = await rawLink(lab, bytes);
    rows.push({ case: `${raw.tool} h0 → h1 (same link)`, seconds: +raw.seconds.toFixed(3), 'Gbit/s': gbps(bytes, raw.seconds), 'x one transfer': '' });

    const one = (await fetchOn(a1)).ms / 1000;
    await rm(a1);
    rows.push({ case: 'one transfer h0 → h1', seconds: +one.toFixed(3), 'Gbit/s': gbps(bytes, one), 'x one transfer': 1 });
    rows[0] = { ...rows[0]!, 'x one transfer': +(raw.seconds / one).toFixed(2) };

    const t0 = performance.now();
    for (const a of [a1, a2, a3]) await fetchOn(a);
    const seq = (performance.now() - t0) / 1000;
    for (const a of [a1, a2, a3]) await rm(a);
    rows.push({ case: 'sequential h0 → h1, h2, h3', seconds: +seq.toFixed(3), 'Gbit/s': gbps(3 * bytes, seq), 'x one transfer': +(seq / one).toFixed(2) });

    const t1 = performance.now();
    await Promise.all([fetchOn(a1, 'h0'), fetchOn(a2, 'h1'), fetchOn(a3, 'h2')]);
    const chain = (performance.now() - t1) / 1000;
    rows.push({ case: 'broadcast chain h0 → h1 → h2 → h3', seconds: +chain.toFixed(3), 'Gbit/s': gbps(3 * bytes, chain), 'x one transfer': +(chain / one).toFixed(2) });

    printTable(`artifacts: ${sizeMiB} MiB (${art.chunks} chunks of 4 MiB) on a ${HOSTS}-node ${rate} lab LAN`, rows, json,
      'Gbit/s: bytes delivered to all receiving nodes over the wall time (a chain of 3 moves 3x the bytes). one transfer / sequential / chain: verified (SHA-256) and fdatasync\'d into the store.');
    // Let the agents close and exit on their own (their profiles are written at exit), at most 10 s.
    await Promise.all(agents.map((a) => new Promise<void>((resolve) => {
      if (a.child.exitCode !== null) return resolve();
      const timer = setTimeout(resolve, 10_000);
      a.child.once('exit', () => { clearTimeout(timer); resolve(); });
      a.child.stdin!.end();
    })));
  } finally {
    await lab.teardown();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The link's capacity for the same bytes: iperf3 -n when installed, else a raw Node TCP stream timed at the sink. */
async function rawLink(lab: Lab, bytes: number): Promise<{ tool: string; seconds: number }> {
  const dst = lab.hosts[1]!.lanIp;
  if (existsSync('/usr/bin/iperf3')) {
    const server = lab.spawn(1, 'iperf3', ['-s', '-1', '-p', '5299']);
    await new Promise((r) => setTimeout(r, 500));
    const out = await lab.exec(0, ['iperf3', '-c', dst, '-p', '5299', '-n', String(bytes), '-J'], { timeoutMs: 120_000 });
    server.kill();
    const j = JSON.parse(out.stdout) as { end: { sum_received: { seconds: number } } };
    return { tool: 'iperf3', seconds: j.end.sum_received.seconds };
  }
  const sink = lab.spawn(1, process.execPath, ['-e', `const n=require('node:net');n.createServer((c)=>{let b=0,t0=0;c.on('data',(d)=>{if(!t0)t0=performance.now();b+=d.length});c.on('end',()=>{console.log(JSON.stringify({b,ms:performance.now()-t0}));process.exit(0)})}).listen(5299,()=>console.log('{"ready":1}'))`]);
  const lines = createInterface({ input: sink.stdout! });
  const results: string[] = [];
  let ready: () => void = () => {};
  const isReady = new Promise<void>((r) => { ready = r; });
  let got: (s: string) => void = () => {};
  const result = new Promise<string>((r) => { got = r; });
  lines.on('line', (l) => { if (l.includes('ready')) ready(); else { results.push(l); got(l); } });
  await isReady;
  const sender = lab.spawn(0, process.execPath, ['-e', `const n=require('node:net');const buf=Buffer.alloc(1<<20);let left=${bytes};const c=n.connect(5299,'${dst}',()=>{const w=()=>{while(left>0){left-=buf.length;if(!c.write(buf)){c.once('drain',w);return}}c.end()};w()})`]);
  const r = JSON.parse(await result) as { b: number; ms: number };
  sender.kill();
  return { tool: 'raw TCP (Node)', seconds: r.ms / 1000 };
}

main().catch((error: unknown) => { process.stderr.write(`artifacts benchmark failed: ${(error as Error).stack ?? String(error)}\n`); process.exitCode = 1; });
