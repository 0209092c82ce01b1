/**
 * Jobs end to end: an MLX-style consumer of the hostfile on a thunderbolt-style ring. Three lab hosts joined
 * in a ring of point-to-point links (labelled thunderbolt, 5 Gbit/s) besides a 200 Mbit/s LAN (slow enough that the
 * cables measure faster even on a loaded machine: the planner picks addresses by measured bandwidth); each rank of an exec
 * job reads `MLX_HOSTFILE` and `MLX_RANK` as `mx.distributed.init(backend="ring")` does, listens on its own entry,
 * connects to its right neighbour at the address the hostfile gives, and exchanges ranks with both neighbours
 * over TCP. Passes only when every address is a p2p link address (the neighbour's end of the cable between them),
 * not the LAN: both the address dialled and the source address the left neighbour's connection came from.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

// Standard library only (/usr/bin/python3): the ring handshake of MLX's ring backend, reduced to exchanging ranks.
const SCRIPT = String.raw`
import json, os, socket, sys, time
out = sys.argv[1]
rank = int(os.environ["MLX_RANK"])
hosts = json.load(open(os.environ["MLX_HOSTFILE"]))
n = len(hosts)
def addr(entry):
    a = entry[0] if isinstance(entry, list) else entry
    host, port = a.rsplit(":", 1)
    return host.strip("[]"), int(port)
me, right = addr(hosts[rank]), addr(hosts[(rank + 1) % n])
left_rank, right_rank = (rank - 1) % n, (rank + 1) % n
server = socket.create_server(me)          # own entry: 0.0.0.0:port
server.settimeout(60)
deadline = time.time() + 60
while True:                                # the right neighbour may not listen yet
    try:
        to_right = socket.create_connection(right, timeout=5)
        break
    except OSError:
        if time.time() > deadline:
            raise
        time.sleep(0.2)
to_right.sendall(f"{rank}\n".encode())
from_left, peer = server.accept()
from_left.settimeout(60)
got_left = int(from_left.makefile().readline())
from_left.sendall(f"{rank}\n".encode())
to_right.settimeout(60)
got_right = int(to_right.makefile().readline())
ok = got_left == left_rank and got_right == right_rank
with open(f"{out}/rank-{rank}.json", "w") as f:
    json.dump({"rank": rank, "world": n, "me": hosts[rank], "dialled": right[0], "leftSource": peer[0], "gotLeft": got_left, "gotRight": got_right}, f)
print(f"rank {rank}: right {right[0]} (rank {got_right}), left from {peer[0]} (rank {got_left})", flush=True)
sys.exit(0 if ok else 4)
`;

// A multi-node lab on a shared 2-core machine (forming the cluster alone took 70 s at load 20): more than the
// default per-file timeout, so a slow CI machine does not cut a healthy run; each wait inside stays bounded.
t.setTimeout(360_000);

t.test(
  'MLX-style hostfile consumer on a thunderbolt ring: ranks reach their neighbours over the p2p links',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'torus-mlx-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    writeFileSync(join(out, 'ring.py'), SCRIPT);
    const ring = [
      { a: 0, b: 1 },
      { a: 1, b: 2 },
      { a: 2, b: 0 },
    ].map((l) => ({ ...l, rate: '5gbit', label: 'thunderbolt' }));
    await withLab(t, { hosts: 3, lanRate: '200mbit', links: ring }, async (lab) => {
      const p2pOf = (h: number) =>
        [0, 1, 2].filter((o) => o !== h).flatMap((o) => ['--iface-type', `${lab.ifName(h, o)}=thunderbolt`]);
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: (h) => ['--allow-exec=python3', '--iface-type', 'lan0=ethernet', ...p2pOf(h)],
      });
      // Every pair has two addresses (LAN and cable), each measured in both directions: 12 links; and the precondition
      // of the test, that every cable measured faster than every LAN link (else the planner rightly picks the LAN).
      const measured = (vs: NodeView[]) =>
        vs.every((v) => {
          const bw = (type: string) => v.topology.links.filter((l) => l.type === type).map((l) => l.bandwidthBps ?? 0);
          return (
            v.topology.nodes.every((n) => n.memory) &&
            v.topology.links.length === 12 &&
            v.topology.links.every((l) => typeof l.bandwidthBps === 'number') &&
            Math.min(...bw('thunderbolt')) > Math.max(...bw('ethernet'))
          );
        });
      await c.converged(140_000, measured);
      const hostOf = (id: string) => c.nodes.findIndex((n) => n.id === id);

      const res = await c.nodes[0]!.fetch('/v1/instances', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instanceId: 'mlx',
          minNodes: 3,
          workload: {
            id: 'mlx-ring',
            kind: 'exec',
            memoryBytes: 1 << 20,
            layers: 3,
            command: '/usr/bin/python3',
            args: [join(out, 'ring.py'), out],
          },
        }),
      });
      const placed = (await res.json()) as { nodes: string[] };
      t.equal(res.status, 201, `placed: ${JSON.stringify(placed).slice(0, 300)}`);
      const done = await c.until(
        'the job to end',
        async () => {
          const v = await c.nodes[0]!.tryGet<{ job: { state: string }; reason?: string; exitCode?: number }>(
            '/v1/instances/mlx',
          );
          return v && v.job.state !== 'running' && v;
        },
        60_000,
        300,
      );
      t.match(
        done,
        { job: { state: 'completed' }, exitCode: 0 },
        `every rank exchanged ranks with both neighbours and exited 0 (${done.reason})`,
      );

      for (const [rank, node] of placed.nodes.entries()) {
        const h = hostOf(node);
        const right = hostOf(placed.nodes[(rank + 1) % 3]!);
        const left = hostOf(placed.nodes[(rank + 2) % 3]!);
        const seen = JSON.parse(readFileSync(join(out, `rank-${rank}.json`), 'utf8')) as {
          dialled: string;
          leftSource: string;
          me: string[];
          gotLeft: number;
          gotRight: number;
        };
        t.match(seen.me, [/^0\.0\.0\.0:\d+$/], `rank ${rank}: its own entry listens on every address`);
        t.equal(
          seen.dialled,
          lab.linkIp(h, right),
          `rank ${rank} (h${h}) dialled rank ${(rank + 1) % 3} (h${right}) at its end of their cable, ${lab.linkIp(h, right)} (LAN would be ${lab.hosts[right]!.lanIp})`,
        );
        t.equal(
          seen.leftSource,
          lab.linkIp(h, left),
          `rank ${rank} (h${h}): rank ${(rank + 2) % 3}'s connection came over their cable, from ${lab.linkIp(h, left)}`,
        );
        t.same(
          [seen.gotLeft, seen.gotRight],
          [(rank + 2) % 3, (rank + 1) % 3],
          `rank ${rank}: exchanged ranks with both neighbours`,
        );
      }
    });
  },
);
