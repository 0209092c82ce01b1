/**
 * Committed writes: three standalone cluster processes in lab namespaces on one bridge; a client sends
 * proposals (InstanceCreated events, the cluster's own write path: no HTTP, no runners) to a follower's process on
 * stdin, which forwards to the leader; a reply means the entry is committed (a quorum holds it on disk) and applied.
 * Measured: latency p50/p99 of one client in a row, throughput of 32 concurrent clients, and the failover time
 * (kill -9 of the leader until a write is committed again) — with fsync on (a data dir: group-fsynced log) and
 * with no data dir (memory only: no fsync), side by side, so the cost of durability is a ratio.
 *   node build/benchmarks/cluster-writes/index.js [--quick] [--json]   (root; needs `ip`)
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { machineLoad, printTable, type BenchRow } from '../table.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');

const entry = (): string => {
  const js = fileURLToPath(new URL('../../src/actors/cluster/standalone.js', import.meta.url));
  if (existsSync(js)) return js;
  throw new Error(`${js} is missing: build with \`tsc -p tsconfig.bench.json\``);
};

class Proc {
  status: { role: string; leader: string | null; digest: string; nodes: string[] } | null = null;
  readonly #replies = new Map<number, (ok: boolean) => void>();
  #id = 1;
  constructor(
    readonly host: number,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { ev: string; id?: number; ok?: boolean };
        if (m.ev === 'status') this.status = m as unknown as Proc['status'];
        if (m.ev === 'reply') this.#replies.get(m.id!)?.(m.ok === true);
      } catch {
        /* not ours */
      }
    });
  }
  propose(event: unknown): Promise<boolean> {
    const id = this.#id++;
    return new Promise((resolve) => {
      this.#replies.set(id, (ok) => {
        this.#replies.delete(id);
        resolve(ok);
      });
      this.child.stdin!.write(`${JSON.stringify({ id, op: 'propose', events: [event] })}\n`);
    });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(pred: () => boolean, ms: number): Promise<number | null> {
  const t0 = performance.now();
  while (!pred()) {
    if (performance.now() - t0 > ms) return null;
    await sleep(5);
  }
  return performance.now() - t0;
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

let seq = 0;
const write = () => ({ type: 'InstanceDeleted', instanceId: `bench-${seq++}`, reason: 'bench' }); // commits and applies, changes nothing

async function run(fsync: boolean): Promise<BenchRow> {
  const lab = await Lab.create({ hosts: 3 });
  const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'torus-bench-writes-')));
  try {
    const spawn = (h: number) =>
      new Proc(
        h,
        lab.spawn(
          h,
          process.execPath,
          [
            entry(),
            JSON.stringify({
              nodeId: `w${h}`,
              clusterName: 'writes',
              timings: { failureTimeoutMs: 3000 },
              ...(fsync ? { dataDir: dirs[h] } : {}),
            }),
          ],
          { env: { ...process.env, TORUS_LOG_LEVEL: 'error' } },
        ),
      );
    let procs = [0, 1, 2].map(spawn);
    const formed = await until(
      () =>
        procs.every((p) => p.status?.nodes.length === 3 && p.status.leader !== null) &&
        new Set(procs.map((p) => p.status!.digest)).size === 1,
      60_000,
    );
    if (formed === null) throw new Error('3 nodes did not form');
    const follower = () => procs.find((p) => p.status?.role === 'follower')!;
    const n = quick ? 200 : 1000;
    const lat: number[] = [];
    const via = follower();
    for (let i = 0; i < 20; i++) await via.propose(write()); // warm-up
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      if (!(await via.propose(write()))) throw new Error('a write failed');
      lat.push(performance.now() - t0);
    }
    const total = quick ? 2000 : 8000;
    let done = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async (_, c) => {
        const p = procs[c % 3]!;
        while (done < total) {
          done++;
          await p.propose(write());
        }
      }),
    );
    const tput = total / ((performance.now() - t0) / 1000);
    const leader = procs.find((p) => p.status?.role === 'leader')!;
    leader.child.kill('SIGKILL');
    const killedAt = performance.now();
    const rest = procs.filter((p) => p !== leader);
    let failover: number | null = null;
    while (performance.now() - killedAt < 20_000) {
      if (await Promise.race([rest[0]!.propose(write()), sleep(2000).then(() => false)])) {
        failover = performance.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    procs = rest;
    return {
      mode: fsync ? 'fsync on (data dir)' : 'no fsync (memory)',
      writes: n,
      p50_ms: +pct(lat, 50).toFixed(2),
      p99_ms: +pct(lat, 99).toFixed(2),
      clients32_writes_per_s: Math.round(tput),
      failover_ms: failover === null ? null : Math.round(failover),
      load1m: machineLoad().loadavg1m,
    };
  } finally {
    await lab.teardown();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const why = Lab.unavailableReason();
  if (why) {
    console.log(`cluster-writes skipped: ${why}`);
    return;
  }
  const rows = [await run(true), await run(false)];
  const ratio = (k: 'p50_ms' | 'clients32_writes_per_s') =>
    ((rows[0]![k] as number) / (rows[1]![k] as number)).toFixed(2);
  printTable(
    'committed writes, 3 standalone nodes in the lab (write = proposal via a follower, answered when committed)',
    rows,
    json,
    `fsync/no-fsync: p50 x${ratio('p50_ms')}, throughput x${ratio('clients32_writes_per_s')}. Targets: p50 <= 10 ms, >= 1000 writes/s with 32 clients, failover <= ~3 s.`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
