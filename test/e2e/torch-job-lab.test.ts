/**
 * Issue 14 end to end: a real torch.distributed Gloo job (Debian's python3-torch) across 3 lab hosts, placed with
 * POST /v1/instances with nothing set by the test but the command: init_process_group("gloo") over env://,
 * all_reduce and all_gather, the job `completed` with exit code 0. (A failing rank and restart on-failure:
 * torch-job-fail-lab.test.ts, same script.)
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

t.test('torch.distributed Gloo job across 3 lab hosts: all_reduce and all_gather, the job completes with exit code 0', { timeout: 178_000, skip: why ? `skipped: ${why}` : false }, async (t) => {
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

    // 1. Every rank runs to the end.
    const ok = await job('ok', -1, 'never');
    t.equal(ok.status, 201, `placed: ${JSON.stringify(ok.body).slice(0, 300)}`);
    const done = await until('ok', 'completed', 90_000);
    t.match(done, { status: 'completed', exitCode: 0, job: { state: 'completed', exitCode: 0 } }, 'the job is completed, exit code 0');
    for (let r = 0; r < 3; r++) {
      const [sum, gathered, iface, master] = readFileSync(join(out, `ok-r${r}-x0`), 'utf8').split(' ');
      t.equal(sum, '6', `rank ${r}: all_reduce sum`);
      t.equal(gathered, '0,1,2', `rank ${r}: all_gather`);
      t.equal(iface, 'lan0', `rank ${r}: GLOO_SOCKET_IFNAME`);
      t.match(master, /^10\.77\./, `rank ${r}: MASTER_ADDR is rank 0's LAN address`);
    }

  });
});
