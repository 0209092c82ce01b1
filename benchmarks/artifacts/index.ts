/**
 * Artifact transfer benchmark, side by side in one run with the load average:
 *   LAN: 4 lab hosts on one switch, each port shaped to --rate (default 1gbit):
 *     iperf3 h0 → h1 (the link's capacity for the same bytes), rsync h0 → h1 (rsync daemon), one torus transfer
 *     h0 → h1 (median of --rounds, interleaved with iperf3), a sequential copy to h1, h2, h3 with rsync and with
 *     torus, and the torus broadcast chain h0 → h1 → h2 → h3; with `--baseline DIR` (another build's root, e.g. the
 *     commit before a change) its one transfer and chain too, on the same links in the same minutes.
 *   ring (--ring-rate, default 4gbit; --no-ring to skip): 4 hosts in a thunderbolt-style ring of point-to-point
 *     links: iperf3 and rsync over the h0–h1 link, one transfer, and the chain around the ring.
 * One transfer / sequential / chain: verified (SHA-256) and synced into the store (the real data path).
 * Both add `iperf3 ×3 at once`: the three hops of the chain carrying the bytes together (the lab's own ceiling).
 *   node build/benchmarks/artifacts/index.js [--size MiB] [--rate 1gbit] [--rounds 3] [--baseline DIR] [--no-lan] [--no-ring] [--json]
 */
import { mkdtempSync, rmSync, openSync, writeSync, closeSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { busyPercent, machineCpu, printTable, type BenchRow } from '../table.js';
import { startAgents, type AgentSet } from './agents.js';
import { rawChain, rawLink, rsyncAvailable, rsyncDaemon } from './baselines.js';
import { args, flag } from '../args.js';

const json = args.includes('--json');
const sizeMiB = Number(flag('--size') ?? (args.includes('--quick') ? 64 : 1024));
const rate = flag('--rate') ?? '1gbit';
const ringRate = flag('--ring-rate') ?? '4gbit';
const rounds = Math.max(1, Number(flag('--rounds') ?? 3));
const baselineRoot = flag('--baseline');
const PORT = 52600;
const HOSTS = 4;
const here = fileURLToPath(new URL('../../src/artifacts/standalone.js', import.meta.url));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const gbps = (b: number, s: number): number => +((b * 8) / s / 1e9).toFixed(3);

async function main(): Promise<void> {
  const why = Lab.unavailableReason();
  if (why) {
    process.stderr.write(`artifacts benchmark skipped: ${why}\n`);
    return;
  }
  const baselineJs = baselineRoot ? join(baselineRoot, 'dist/artifacts/standalone.js') : undefined;
  if (baselineJs && !existsSync(baselineJs)) throw new Error(`--baseline: no ${baselineJs} (build that tree first)`);
  const tmp = mkdtempSync(join(tmpdir(), 'torus-bench-art-'));
  try {
    const file = join(tmp, 'src', 'weights.bin');
    await import('node:fs').then((fs) => fs.mkdirSync(join(tmp, 'src')));
    const fd = openSync(file, 'w');
    for (let i = 0; i < sizeMiB; i++) writeSync(fd, randomBytes(1 << 20));
    closeSync(fd);
    if (!args.includes('--no-lan')) await lanScenario(tmp, file, baselineJs);
    if (!args.includes('--no-ring')) await ringScenario(tmp, file);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function lanScenario(tmp: string, file: string, baselineJs: string | undefined): Promise<void> {
  const lab = await Lab.create({ hosts: HOSTS, lanRate: rate });
  const key = randomBytes(32).toString('hex');
  const sets: { name: string; set: AgentSet }[] = [];
  try {
    const ip = (h: number): string => lab.hosts[h]!.lanIp;
    sets.push({
      name: 'torus',
      set: await startAgents(lab, {
        standaloneJs: here,
        tag: 'now',
        dataRoot: tmp,
        port: PORT,
        key,
        file,
        addressOf: ip,
      }),
    });
    if (baselineJs)
      sets.push({
        name: 'torus (baseline build)',
        set: await startAgents(lab, {
          standaloneJs: baselineJs,
          tag: 'before',
          dataRoot: tmp,
          port: PORT + 1,
          key,
          file,
          addressOf: ip,
        }),
      });
    const bytes = sets[0]!.set.artifact.bytes;
    const rsync = rsyncAvailable() ? await rsyncDaemon(lab, 0, file, tmp) : undefined;
    // Interleaved rounds: every case once per round, so a load change on the shared machine hits them all alike.
    const times = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    const cpuSys = new Map<string, number[]>();
    const add = (k: string, s: number, map = times): void => void map.set(k, [...(map.get(k) ?? []), s]);
    let tool = 'iperf3';
    for (let r = 0; r < rounds; r++) {
      const raw = await rawLink(lab, 0, 1, ip(1), bytes);
      tool = raw.tool;
      add('raw', raw.seconds);
      if (rsync) add('rsync', await rsync.copy(1, ip(0)));
      for (const { name, set } of sets) {
        const [, a1] = set.agents;
        const d = await set.fetchOn(a1!);
        add(name, d.ms / 1000);
        if (d.cpuMs !== undefined) add(name, d.cpuMs / 1000, cpu);
        if (d.cpuSysMs !== undefined) add(name, d.cpuSysMs / 1000, cpuSys);
        await set.rm(a1!);
      }
    }
    const one = median(times.get('torus')!);
    const rows: BenchRow[] = [];
    const row = (c: string, seconds: number, moved = bytes, extra: Record<string, string | number> = {}): void =>
      void rows.push({
        case: c,
        seconds: +seconds.toFixed(3),
        'Gbit/s': gbps(moved, seconds),
        'x one transfer': +(seconds / one).toFixed(2),
        ...extra,
      });
    row(`${tool} h0 → h1 (same link)`, median(times.get('raw')!));
    if (rsync) row('rsync h0 → h1 (rsync daemon)', median(times.get('rsync')!));
    for (const { name } of sets) {
      const c = cpu.get(name);
      const k = cpuSys.get(name);
      const perMiB = (xs: number[]): number => +((median(xs) * 1000) / (bytes / 2 ** 20)).toFixed(2);
      row(
        `one transfer h0 → h1, ${name}`,
        median(times.get(name)!),
        bytes,
        c
          ? { 'receiver CPU s': +median(c).toFixed(2), 'CPU ms/MiB': perMiB(c), 'kernel ms/MiB': k ? perMiB(k) : '' }
          : {},
      );
    }
    if (rsync) {
      const t0 = performance.now();
      for (const h of [1, 2, 3]) await rsync.copy(h, ip(0));
      row('rsync sequential h0 → h1, h2, h3', (performance.now() - t0) / 1000, 3 * bytes);
      rsync.stop();
    }
    const main = sets[0]!.set;
    const [, a1, a2, a3] = main.agents as [
      unknown,
      NonNullable<AgentSet['agents'][0]>,
      NonNullable<AgentSet['agents'][0]>,
      NonNullable<AgentSet['agents'][0]>,
    ];
    const t0 = performance.now();
    for (const a of [a1, a2, a3]) await main.fetchOn(a);
    row('torus sequential h0 → h1, h2, h3', (performance.now() - t0) / 1000, 3 * bytes);
    for (const a of [a1, a2, a3]) await main.rm(a);
    const rawThree = await rawChain(lab, ip, bytes);
    row(`${rawThree.tool} ×3 at once h0 → h1, h1 → h2, h2 → h3`, rawThree.seconds, 3 * bytes);
    for (const { name, set } of sets) {
      const [, b1, b2, b3] = set.agents;
      const t1 = performance.now();
      await Promise.all([set.fetchOn(b1!, 'h0'), set.fetchOn(b2!, 'h1'), set.fetchOn(b3!, 'h2')]);
      row(`broadcast chain h0 → h1 → h2 → h3, ${name}`, (performance.now() - t1) / 1000, 3 * bytes);
      for (const a of [b1!, b2!, b3!]) await set.rm(a);
    }
    // A cut mid-way (a resume loses no more than the chunks in flight): h1 off the LAN for 2 s once it holds
    // 40 %, then back; chunks fetched twice are what the cut cost.
    const cutRun = main.fetchOn(a1);
    await a1.next(
      (m) =>
        Array.isArray(m.transfers) &&
        m.transfers.some((x: { have: number; chunks: number }) => x.have >= 0.4 * x.chunks),
    );
    await lab.cut(1, 'lan');
    await new Promise((r) => setTimeout(r, 2000));
    await lab.restore(1, 'lan');
    const cutDone = await cutRun;
    const fetched = Object.values(cutDone.bySource ?? {}).reduce((n, x) => n + x.chunks, 0);
    row('one transfer, h1 cut off the LAN for 2 s at 40 %', cutDone.ms / 1000, bytes, {
      'chunks fetched twice': fetched - main.artifact.chunks,
    });
    await main.rm(a1);
    printTable(
      `artifacts: ${sizeMiB} MiB on a ${HOSTS}-node ${rate} lab LAN (median of ${rounds} interleaved rounds for the one-transfer rows)`,
      rows,
      json,
      "Gbit/s: bytes delivered to all receiving nodes over the wall time (3 receivers: 3x the bytes). x one transfer: against torus's one transfer. rsync: a fresh copy, not synced to disk (rsync's default); torus syncs.",
    );
  } finally {
    for (const { set } of sets) await set.close();
    await lab.teardown();
  }
}

async function ringScenario(tmp: string, file: string): Promise<void> {
  const links = [0, 1, 2, 3].map((a) => ({ a, b: (a + 1) % HOSTS, rate: ringRate, label: 'thunderbolt' }));
  const lab = await Lab.create({ hosts: HOSTS, lanRate: rate, links });
  const key = randomBytes(32).toString('hex');
  let set: AgentSet | undefined;
  try {
    // Each node is reached at its address on the ring link from the node before it: the chain runs on the ring.
    const addressOf = (h: number): string => lab.linkIp((h + 1) % HOSTS, h);
    set = await startAgents(lab, {
      standaloneJs: here,
      tag: 'ring',
      dataRoot: tmp,
      port: PORT + 2,
      key,
      file,
      addressOf,
    });
    const bytes = set.artifact.bytes;
    const [, a1, a2, a3] = set.agents;
    // Interleaved rounds, as on the LAN: iperf3 then one transfer, --rounds times; the medians are compared. Each
    // case also says how busy the machine's CPUs were (all lab hosts share them): near 100 %, the case is CPU-bound.
    const times = new Map<string, number[]>();
    const busy = new Map<string, number[]>();
    const measure = async (c: string, f: () => Promise<unknown>): Promise<void> => {
      const c0 = machineCpu();
      const t0 = performance.now();
      const own = await f();
      times.set(c, [...(times.get(c) ?? []), typeof own === 'number' ? own : (performance.now() - t0) / 1000]);
      busy.set(c, [...(busy.get(c) ?? []), busyPercent(c0, machineCpu())]);
    };
    let tool = 'iperf3';
    for (let r = 0; r < rounds; r++) {
      await measure('raw', async () => {
        const raw = await rawLink(lab, 0, 1, lab.linkIp(0, 1), bytes);
        tool = raw.tool;
        return raw.seconds;
      });
      await measure('one', async () => (await set!.fetchOn(a1!)).ms / 1000);
      await set.rm(a1!);
    }
    for (let r = 0; r < rounds; r++) {
      await measure('chain', async () => {
        await Promise.all([set!.fetchOn(a1!, 'h0'), set!.fetchOn(a2!, 'h1'), set!.fetchOn(a3!, 'h2')]);
      });
      for (const a of [a1!, a2!, a3!]) await set.rm(a);
      await measure('raw3', async () => (await rawChain(lab, (to) => lab.linkIp(to - 1, to), bytes)).seconds);
    }
    const one = median(times.get('one')!);
    const rows: BenchRow[] = [];
    const row = (c: string, key: string, moved = bytes): void => {
      const seconds = median(times.get(key)!);
      rows.push({
        case: c,
        seconds: +seconds.toFixed(3),
        'Gbit/s': gbps(moved, seconds),
        'x one transfer': +(seconds / one).toFixed(2),
        'CPU busy %': median(busy.get(key)!),
      });
    };
    row(`${tool} h0 → h1 (ring link)`, 'raw');
    if (rsyncAvailable()) {
      const rsync = await rsyncDaemon(lab, 0, file, tmp);
      await measure('rsync', () => rsync.copy(1, addressOf(0)));
      rsync.stop();
      row('rsync h0 → h1 (ring link)', 'rsync');
    }
    row('one transfer h0 → h1 (ring link)', 'one');
    row('broadcast chain h0 → h1 → h2 → h3 (ring links)', 'chain', 3 * bytes);
    row(`${tool} ×3 at once h0 → h1, h1 → h2, h2 → h3 (ring links)`, 'raw3', 3 * bytes);
    printTable(
      `artifacts: ${sizeMiB} MiB on a 4-node thunderbolt-style ring of ${ringRate} links (median of ${rounds} rounds for the iperf3, one-transfer and chain rows)`,
      rows,
      json,
      'Each hop of the chain is one ring link; every node in the ring also has the LAN. CPU busy %: the whole machine (every lab host shares its CPUs) over the case.',
    );
  } finally {
    await set?.close();
    await lab.teardown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`artifacts benchmark failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
