/**
 * Cluster formation in the lab: N standalone node processes (N = 2, 4, 8) start at once in N network
 * namespaces on one bridge (mDNS discovery); we time until every node reports the same state digest listing
 * all N nodes with one leader, then kill -9 a follower and time until every survivor has dropped it
 * (NodeGone applied), then kill -9 the leader and time until a new leader is followed by all.
 * Targets: converge <= 2 s for 4 nodes; detect a dead node <= 5 s (failure timeout 3 s).
 * With 2 nodes the node killed first is the one with the higher id: only the lowest id keeps a quorum alone
 * (docs/cluster.md, Quorum); with more nodes it is a follower.
 * The standalone nodes share one cluster key (handshake proof + encrypted frames, protocol v3). With
 * `--compare-insecure` each standalone run is paired with the same run of open nodes (no key, `--insecure-open`)
 * and the table shows both side by side with the keyed/open ratio (at most 10 % slower).
 *   node build/benchmarks/cluster-formation/index.js [--quick] [--json] [--no-real] [--compare-insecure]   (root; needs `ip` and `tc`)
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { readApiTokenIn } from '../../src/protocols/data-dir-files.js';
import { printTable, type BenchRow } from '../table.js';

/** GET inside a namespace with the API token: curl when installed (light), else Node's fetch (a whole Node start per request). */
const FETCH =
  'fetch(process.argv[1], { headers: { authorization: process.argv[2] }, signal: AbortSignal.timeout(1500) }).then((r) => r.text()).then((t) => process.stdout.write(t), () => process.exit(1))';
const getArgv = (url: string, auth: string): string[] =>
  existsSync('/usr/bin/curl')
    ? ['curl', '-s', '-m', '2', '-H', `Authorization: ${auth}`, url]
    : [process.execPath, '-e', FETCH, url, auth];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');
const noReal = args.includes('--no-real');
const compareInsecure = args.includes('--compare-insecure');
/** The cluster-port key of the standalone nodes (as actor-specs passes keys.peerKey: hex). */
const BENCH_PEER_KEY = 'b3c4'.repeat(16);
const FAILURE_TIMEOUT_MS = 3000;

interface Status {
  role: string;
  leader: string | null;
  digest: string;
  nodes: string[];
}

const entry = (): string => {
  const js = fileURLToPath(new URL('../../src/actors/cluster/standalone.js', import.meta.url));
  if (existsSync(js)) return js;
  throw new Error(`${js} is missing: build with \`tsc -p tsconfig.bench.json\``);
};

class Proc {
  status: Status | null = null;
  startedAt = 0;
  readyAt = 0;
  constructor(
    readonly id: string,
    readonly child: ChildProcess,
  ) {
    this.startedAt = performance.now();
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { ev: string } & Status;
        if (m.ev === 'started') this.readyAt = performance.now();
        if (m.ev === 'status') this.status = m;
      } catch {
        /* not ours */
      }
    });
  }
}

async function until(pred: () => boolean, ms: number): Promise<number | null> {
  const t0 = performance.now();
  while (!pred()) {
    if (performance.now() - t0 > ms) return null;
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - t0;
}

const converged = (procs: readonly Proc[], n: number) => {
  const s = procs.map((p) => p.status);
  return (
    s.every((x) => x && x.nodes.length === n && x.leader !== null) &&
    new Set(s.map((x) => x!.digest)).size === 1 &&
    s.filter((x) => x!.role === 'leader').length === 1
  );
};

async function run(n: number, secret: string | null = BENCH_PEER_KEY): Promise<BenchRow> {
  const lab = await Lab.create({ hosts: n });
  try {
    const t0 = performance.now();
    const procs = lab.hosts.map(
      (h) =>
        new Proc(
          `h${h.index}`,
          lab.spawn(
            h.index,
            process.execPath,
            [
              entry(),
              JSON.stringify({
                nodeId: `h${h.index}`,
                clusterName: 'bench',
                timings: { failureTimeoutMs: FAILURE_TIMEOUT_MS },
                ...(secret ? { secret } : {}),
              }),
            ],
            { env: { ...process.env, TORUS_LOG_LEVEL: 'error' } },
          ),
        ),
    );
    const form = await until(() => converged(procs, n), 30_000);
    const lastReady = Math.max(...procs.map((p) => p.readyAt));
    const formedAt = performance.now();
    // 2 nodes: the survivor must be the lowest id to keep a quorum (exactly half with the lowest id).
    const follower = n === 2 ? procs[procs.length - 1]! : procs.find((p) => p.status?.role !== 'leader')!;
    follower.child.kill('SIGKILL');
    const rest = procs.filter((p) => p !== follower);
    const detect = await until(
      () => rest.every((p) => !p.status!.nodes.some((x) => x.startsWith(`${follower.id}@`))),
      20_000,
    );
    const leader = rest.find((p) => p.status?.role === 'leader');
    let failover: number | null | 'n/a' = 'n/a';
    if (leader && rest.length >= 2) {
      leader.child.kill('SIGKILL');
      const left = rest.filter((p) => p !== leader);
      failover = await until(
        () =>
          left.some((p) => p.status?.role === 'leader') &&
          left.every(
            (p) => p.status!.leader !== leader.id && p.status!.leader !== null && p.status!.nodes.length === n - 2,
          ),
        20_000,
      );
    }
    const ms = (v: number | null | 'n/a') => (v === null ? 'timeout' : v === 'n/a' ? v : Math.round(v));
    return {
      nodes: n,
      'converge from spawn ms': form === null ? 'timeout' : Math.round(form),
      'converge from last process up ms': form === null ? 'timeout' : Math.round(formedAt - lastReady),
      'process start ms': Math.round(lastReady - t0),
      'detect dead node ms': ms(detect),
      'leader failover + NodeGone ms': ms(failover),
    };
  } finally {
    await lab.teardown();
  }
}

/** Keyed and open figures of one size side by side, with keyed/open ratios. */
function paired(keyed: BenchRow, open: BenchRow): BenchRow {
  const ratio = (k: unknown, o: unknown) =>
    typeof k === 'number' && typeof o === 'number' && o > 0 ? (k / o).toFixed(2) : 'n/a';
  const f = (row: BenchRow, key: string) => row[key] ?? null;
  return {
    nodes: keyed.nodes ?? null,
    'converge keyed ms': f(keyed, 'converge from last process up ms'),
    'converge open ms': f(open, 'converge from last process up ms'),
    'converge ratio': ratio(f(keyed, 'converge from last process up ms'), f(open, 'converge from last process up ms')),
    'failover keyed ms': f(keyed, 'leader failover + NodeGone ms'),
    'failover open ms': f(open, 'leader failover + NodeGone ms'),
    'failover ratio': ratio(f(keyed, 'leader failover + NodeGone ms'), f(open, 'leader failover + NodeGone ms')),
  };
}

/** One join token for every real node of a bench cluster (each would otherwise create its own). */
const BENCH_SECRET = `torus-bench-${process.pid}-${Date.now().toString(36)}`;
const realMain = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
const benchDataDir = (lab: Lab, h: number): string => `/tmp/torus-bench-${process.pid}-${lab.id}-${h}`;

/** One real node's view through its HTTP API (fetched from inside the namespace). */
async function realView(
  lab: Lab,
  h: number,
): Promise<{ role: string; id: string; digest: string; nodes: string[]; links: number } | null> {
  try {
    // The token as the CLI on the node's machine finds it: the file the node saved in its data dir.
    const auth = `Bearer ${readApiTokenIn(benchDataDir(lab, h)) ?? ''}`;
    const get = async (path: string) =>
      JSON.parse(
        (await lab.exec(h, getArgv(`http://127.0.0.1:7000${path}`, auth), { timeoutMs: 5000 })).stdout,
      ) as Record<string, unknown>;
    const [node, st] = await Promise.all([get('/v1/node'), get('/v1/state')]);
    const state = st.state as { nodes: Record<string, unknown>; links: unknown[] };
    return {
      role: node.role as string,
      id: node.id as string,
      digest: st.digest as string,
      nodes: Object.keys(state.nodes),
      links: state.links.length,
    };
  } catch {
    return null;
  }
}

/** Real nodes (`dist/main.js`, profiler included): converged = same digest, N nodes and N(N-1) measured links. */
async function runReal(n: number): Promise<BenchRow> {
  const lab = await Lab.create({ hosts: n });
  try {
    const t0 = performance.now();
    const procs = lab.hosts.map((h) =>
      lab.spawn(
        h.index,
        process.execPath,
        [
          realMain,
          'start',
          '--port',
          '7000',
          '--data-dir',
          benchDataDir(lab, h.index),
          '--cluster',
          'bench',
          '--name',
          `h${h.index}`,
          '--failure-timeout-ms',
          String(FAILURE_TIMEOUT_MS),
        ],
        { env: { ...process.env, TORUS_LOG_LEVEL: 'error', TORUS_SECRET: BENCH_SECRET } },
      ),
    );
    const views = async (hosts: number[]) => Promise.all(hosts.map((h) => realView(lab, h)));
    let converge: number | null = null;
    let members: number | null = null;
    let last: Awaited<ReturnType<typeof views>> = [];
    while (performance.now() - t0 < 90_000) {
      last = await views(lab.hosts.map((h) => h.index));
      const same = last.every((v) => v && v.nodes.length === n) && new Set(last.map((v) => v!.digest)).size === 1;
      if (same && members === null) members = performance.now() - t0;
      if (same && last.every((v) => v!.links === n * (n - 1))) {
        converge = performance.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    let detect: number | null = null;
    const victim = last.findIndex((v) => v && v.role !== 'leader');
    if (members !== null && victim >= 0) {
      const gone = last[victim]!.id;
      procs[victim]!.kill('SIGKILL');
      const t1 = performance.now();
      const rest = lab.hosts.map((h) => h.index).filter((h) => h !== victim);
      while (performance.now() - t1 < 20_000) {
        const vs = await views(rest);
        if (vs.every((v) => v && !v.nodes.includes(gone))) {
          detect = performance.now() - t1;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const ms = (v: number | null) => (v === null ? 'timeout' : Math.round(v));
    const links = Math.min(...last.map((v) => v?.links ?? 0));
    return {
      nodes: n,
      'same digest, all N nodes ms (from spawn)': ms(members),
      'and all links measured ms':
        converge === null ? `timeout (${links}/${n * (n - 1)} links at 90 s)` : Math.round(converge),
      'detect dead follower ms': ms(detect),
    };
  } finally {
    await lab.teardown();
    await import('node:fs').then((fs) => {
      for (const h of lab.hosts)
        fs.rmSync(`/tmp/torus-bench-${process.pid}-${lab.id}-${h.index}`, { recursive: true, force: true });
    });
  }
}

async function main(): Promise<void> {
  const why = Lab.unavailableReason();
  if (why) {
    process.stdout.write(`cluster-formation skipped: ${why}\n`);
    return;
  }
  const sizes = process.env.BENCH_SIZES ? process.env.BENCH_SIZES.split(',').map(Number) : quick ? [2, 4] : [2, 4, 8];
  const reps = quick ? 1 : 3;
  const rows: BenchRow[] = [];
  if (compareInsecure) {
    for (const n of sizes)
      for (let r = 0; r < reps; r++)
        rows.push({ run: r + 1, ...paired(await run(n, BENCH_PEER_KEY), await run(n, null)) });
    printTable(
      'cluster formation, keyed (encrypted, v3) vs open nodes, same lab (mDNS, failure timeout 3000 ms)',
      rows,
      json,
      'ratio = keyed / open; the target is <= 1.10. Pairs run back to back on a shared machine: compare the medians of several runs.',
    );
    return;
  }
  for (const n of sizes) for (let r = 0; r < reps; r++) rows.push({ run: r + 1, ...(await run(n)) });
  printTable(
    'cluster formation, standalone cluster nodes (lab, mDNS, failure timeout 3000 ms)',
    rows,
    json,
    'Targets: converge <= 2000 ms for 4 nodes (from the last process up); detect a dead node <= 5000 ms. The settle period (600 ms) ' +
      'a starting node waits for an existing leader is part of the convergence time. Machine shared and noisy: compare within a run.',
  );
  if (noReal) return;
  if (!existsSync(realMain)) {
    process.stdout.write(`\n(real-node runs skipped: ${realMain} missing, run \`npm run build\`)\n`);
    return;
  }
  const real: BenchRow[] = [];
  for (const n of sizes) real.push(await runReal(n));
  printTable(
    'cluster formation, real nodes (dist/main.js: all actors, links probed by the profiler)',
    real,
    json,
    'From spawning N node processes (each starts its actor threads) to one digest listing N nodes and N(N-1) measured links, ' +
      'polled over HTTP every ~100 ms; then kill -9 a follower until every survivor dropped it.',
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
