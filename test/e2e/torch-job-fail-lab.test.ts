/**
 * Issue 14 end to end: a real torch.distributed Gloo job (Debian's python3-torch) across 3 lab hosts, placed with
 * POST /v1/instances with nothing set by the test but the command (the script of torch-job-lab.test.ts). One rank
 * exits 3 after the collectives: the others are stopped
 * within seconds and the job is `failed` naming that rank and code 3. Then `restart: on-failure` reruns the group
 * and the rerun completes.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode } from './lab-cluster.js';
import { profiled } from '../runner/fixtures/lab-runners.js';

function torchMissing(): string | undefined {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import torch.distributed'], { stdio: 'ignore', timeout: 60_000 });
    return undefined;
  } catch {
    return 'needs /usr/bin/python3 with torch (Debian package python3-torch)';
  }
}
const why = Lab.unavailableReason() ?? e2eUnavailableReason() ?? torchMissing();

const SCRIPT = `
import os, sys, time
import torch, torch.distributed as dist
out, fail_rank, fail_when = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
total = torch.tensor([float(rank + 1)])
dist.all_reduce(total)
gathered = [torch.zeros(1) for _ in range(world)]
dist.all_gather(gathered, torch.tensor([float(rank)]))
restarts = os.environ["TORCHELASTIC_RESTART_COUNT"]
print(f"rank {rank}/{world} sum={total.item():g} gathered={[g.item() for g in gathered]}", flush=True)
with open(f"{out}/{os.environ['TORUS_INSTANCE_ID']}-r{rank}-x{restarts}", "w") as f:
    f.write(f"{total.item():g} {','.join(f'{g.item():g}' for g in gathered)} {os.environ['GLOO_SOCKET_IFNAME']} {os.environ['MASTER_ADDR']}")
if rank == fail_rank and (fail_when == "always" or restarts == "0"):
    print("rank failing on purpose", file=sys.stderr, flush=True)
    sys.exit(3)
if fail_when == "always":
    time.sleep(300)  # a rank that would run on: it must be stopped when another fails
dist.destroy_process_group()
`;

interface JobView {
  status: string; reason?: string; exitCode?: number;
  job?: { state: string; exitCode?: number; failedRank?: number; failedNode?: string; restarts: number };
  runners: { node: string; rank: number; status: string; exitCode?: number }[];
}

/** The node's API token, where the node saved it for its local CLI (absent while the API is open). */
function authOf(n: E2eNode): Record<string, string> {
  const file = join(n.dataDir, 'api-token');
  return existsSync(file) ? { authorization: `Bearer ${readFileSync(file, 'utf8').trim()}` } : {};
}

async function post(n: E2eNode, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(n.api + path, { method: 'POST', headers: { 'content-type': 'application/json', ...authOf(n) }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
  return { status: res.status, body: await res.json() };
}

async function view(n: E2eNode, id: string): Promise<JobView | null> {
  try {
    const res = await fetch(`${n.api}/v1/instances/${id}`, { headers: authOf(n), signal: AbortSignal.timeout(5000) });
    return res.ok ? (await res.json()) as JobView : null;
  } catch {
    return null;
  }
}

async function scriptProcs(lab: Lab, host: number, script: string): Promise<number> {
  const r = await lab.exec(host, `for p in $(ip netns pids ${lab.hosts[host]!.ns}); do cat /proc/$p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done`);
  return r.stdout.split('\n').filter((l) => l.startsWith('/usr/bin/python3') && l.includes(script)).length;
}

t.test('torch.distributed Gloo job across 3 lab hosts: a failing rank stops the group; on-failure restarts it', { timeout: 178_000, skip: why ? `skipped: ${why}` : false }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'torus-torch-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  const script = join(out, 'job.py');
  writeFileSync(script, SCRIPT);
  await withLab(t, { hosts: 3 }, async (lab) => {
    const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec=python3', '--iface-type', 'lan0=ethernet'] });
    await c.converged(100_000, profiled);
    const n0 = c.nodes[0]!;
    const job = (id: string, failRank: number, failWhen: string, extra: Record<string, unknown> = {}) => post(n0, '/v1/instances', {
      instanceId: id, minNodes: 3,
      workload: { id: 'torch-job', kind: 'exec', memoryBytes: 1 << 20, layers: 3, command: '/usr/bin/python3', args: [script, out, String(failRank), failWhen], ...extra },
    });
    const until = (id: string, state: string, ms: number) => c.until(`${id} ${state}`, async () => {
      const v = await view(n0, id);
      return v?.job?.state === state && v;
    }, ms, 300);

    // 2. Rank 1 exits 3 after the collectives; ranks 0 and 2 would sleep on.
    const bad = await job('bad', 1, 'always');
    t.equal(bad.status, 201);
    const failed = await until('bad', 'failed', 90_000);
    const failedAt = Date.now();
    t.match(failed, { exitCode: 3, job: { state: 'failed', exitCode: 3, failedRank: 1 }, reason: /^rank 1 \(node \S+\) exited with code 3; stderr: .*rank failing on purpose/ },
      `failed naming rank 1 and code 3: ${failed.reason}`);
    await c.until('the other ranks stopped', async () => (await Promise.all([0, 1, 2].map((h) => scriptProcs(lab, h, script)))).every((n) => n === 0), 20_000, 250);
    t.ok(Date.now() - failedAt < 20_000, `every rank stopped ${Date.now() - failedAt} ms after the failure was recorded`);

    // 3. restart on-failure: rank 1 fails on the first run only; the group reruns (restart count 1) and completes.
    const again = await job('again', 1, 'first', { restart: { policy: 'on-failure', max: 2 } });
    t.equal(again.status, 201);
    const rerun = await until('again', 'completed', 120_000);
    t.match(rerun, { job: { state: 'completed', restarts: 1, exitCode: 0 } }, 'completed after one group restart');
    for (let r = 0; r < 3; r++) t.ok(existsSync(join(out, `again-r${r}-x1`)), `rank ${r} ran again (TORCHELASTIC_RESTART_COUNT=1)`);
  });
});
