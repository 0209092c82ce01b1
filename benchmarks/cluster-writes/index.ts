/**
 * Committed writes: three standalone cluster processes in lab namespaces on one bridge; a client sends
 * proposals (InstanceDeleted events of instances that do not exist: the cluster's own write path, no HTTP, no
 * runners, a state that does not grow) to a follower's process on stdin, which forwards to the leader; a reply means
 * the entry is committed (a quorum holds it on disk) and applied. Measured: latency p50/p99 of one client in a row,
 * throughput of 32 concurrent clients (acknowledged writes only: a refused write fails the run), and the failover
 * time (kill -9 of the leader until a write is committed again) — with fsync on (a data dir: group-fsynced log) and
 * with no data dir (memory only: no fsync), side by side, so the cost of durability is a ratio. Before the kill,
 * every acknowledged write must be in every node's log at its index (clients.ts), or the run fails.
 *   node build/benchmarks/cluster-writes/index.js [--quick] [--json]   (root; needs `ip`)
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { machineLoad, printTable, type BenchRow } from '../table.js';
import { missingWrites, runClients, type AckedWrite } from './clients.js';
import { Proc } from './proc.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');

const entry = (): string => {
  const js = fileURLToPath(new URL('../../src/actors/cluster/standalone.js', import.meta.url));
  if (existsSync(js)) return js;
  throw new Error(`${js} is missing: build with \`tsc -p tsconfig.bench.json\``);
};

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
        `w${h}`,
        lab.spawn(
          h,
          process.execPath,
          [
            entry(),
            JSON.stringify({
              nodeId: `w${h}`,
              clusterName: 'writes',
              timings: { failureTimeoutMs: 3000 },
              recordApplied: true,
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
    const acked: AckedWrite[] = [];
    const via = follower();
    const writeVia = async (p: Proc): Promise<void> => {
      const event = write();
      const answer = await p.propose(event);
      if (!answer.ok) throw new Error(`a write was refused: ${answer.error}`);
      acked.push({ index: answer.index, event });
    };
    for (let i = 0; i < 20; i++) await writeVia(via); // warm-up
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await writeVia(via);
      lat.push(performance.now() - t0);
    }
    const total = quick ? 2000 : 8000;
    const t0 = performance.now();
    const concurrent = await runClients(32, total, (c) => {
      const event = write();
      return { event, answer: procs[c % 3]!.propose(event) };
    });
    const tput = concurrent.length / ((performance.now() - t0) / 1000);
    acked.push(...concurrent);
    // Every acknowledged write in every node's log: wait until each has applied up to the last one, then compare.
    const last = Math.max(...acked.map((w) => w.index));
    if ((await until(() => procs.every((p) => (p.status?.lastIndex ?? 0) >= last), 30_000)) === null)
      throw new Error(`not every node applied up to index ${last} within 30 s`);
    const problems = missingWrites(
      acked,
      await Promise.all(procs.map(async (p) => ({ name: p.name, log: await p.applied() }))),
    );
    if (problems.length > 0)
      throw new Error(`${problems.length} acknowledged writes not in every log:\n${problems.slice(0, 10).join('\n')}`);
    const leader = procs.find((p) => p.status?.role === 'leader')!;
    leader.child.kill('SIGKILL');
    const killedAt = performance.now();
    const rest = procs.filter((p) => p !== leader);
    let failover: number | null = null;
    while (performance.now() - killedAt < 20_000) {
      // Refusals are expected here (no leader yet): the first acknowledged write ends the failover.
      const answer = await Promise.race([rest[0]!.propose(write()), sleep(2000).then(() => null)]);
      if (answer?.ok) {
        failover = performance.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    procs = rest;
    return {
      mode: fsync ? 'fsync on (data dir)' : 'no fsync (memory)',
      writes: n,
      clients32_acked: concurrent.length,
      checked_on_3_nodes: acked.length,
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
