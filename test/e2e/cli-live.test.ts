/**
 * End to end, real processes: the CLI (`node dist/main.js status|peers|place|instances|delete`) run inside a lab
 * host's namespace against its live node (default API address, no --api), on a 3-node cluster (LAN + a
 * thunderbolt p2p link) with a 4th node of another cluster on the same LAN (so `peers` has something to say).
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  'CLI against a live lab cluster: status, peers, place (exec), instances, delete',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(
      t,
      { hosts: 4, lanRate: '1gbit', links: [{ a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' }] },
      async (lab) => {
        const t0 = Date.now();
        const c = await E2eCluster.start(t, lab, {
          clusterOf: (h) => (h === 3 ? 'other' : 'e2e'),
          // h0 also has a static peer nobody answers at (listed as unreachable).
          nodeArgs: (h) => [
            '--allow-exec',
            '--iface-type',
            'lan0=ethernet',
            ...(h <= 1 ? ['--iface-type', `${lab.ifName(h, h === 0 ? 1 : 0)}=thunderbolt`] : []),
            ...(h === 0 ? ['--peers', '10.77.0.99:52515'] : []),
          ],
        });
        const members = () => c.nodes.slice(0, 3).filter((n) => n.alive);
        const ids = () => c.nodes.map((n) => n.id || n.printedId); // h3 is not a member: its id is the one it printed
        const measuredAll = (vs: NodeView[]) =>
          vs.every(
            (v) => v.topology.links.length === 8 && v.topology.links.every((l) => typeof l.bandwidthBps === 'number'),
          );
        const vs = await c.converged(90_000, measuredAll, members);
        const readyMs = Date.now() - t0;
        const leader = vs.find((v) => v.node.role === 'leader')!;
        const follower = vs.find((v) => v.node.role !== 'leader')!.host;

        // status: readable table (from a follower: it shows the whole cluster too)
        const timings: Record<string, number> = {};
        const run = async (h: number, args: string[]) => {
          const s = Date.now();
          const r = await c.cli(h, args);
          timings[args[0]!] = Math.max(timings[args[0]!] ?? 0, Date.now() - s);
          return r;
        };
        const st = await run(follower, ['status']);
        t.equal(st.code, 0, 'status exits 0');
        t.equal(st.stderr, '', 'status writes nothing to stderr');
        t.notMatch(st.stdout, /10\.77\.0\.99/, 'a peer that never answered is not a node');
        t.comment(`status on h${follower}:\n${st.stdout}`);
        t.match(
          st.stdout,
          new RegExp(`^node h${follower} \\(${ids()[follower]}\\): follower, leader h${leader.host}`),
          'first line: this node, its role and the leader',
        );
        t.match(st.stdout, /NODES \(3\)/);
        t.match(st.stdout, /LINKS \(8\)/);
        const lines = st.stdout.split('\n').map((l) => l.trim());
        for (let h = 0; h < 3; h++) {
          const row = lines.find((l) => l.startsWith(ids()[h]!));
          t.ok(row, `a node row for h${h}`);
          t.match(row ?? '', new RegExp(`h${h}\\s+(leader|follower)\\s+\\d`), `h${h} row: name, role`);
          t.match(row ?? '', /\d+(\.\d+)? [KMGT]iB \/ \d+(\.\d+)? [KMGT]iB/, `h${h} row: memory available / total`);
          t.match(row ?? '', h === leader.host ? /\sleader\s/ : /\sfollower\s/, `h${h} row: the right role`);
        }
        const linkRows = lines.filter((l) => /^h\d\s+h\d\s+10\.77\./.test(l));
        t.equal(linkRows.length, 8, 'one row per link');
        t.ok(
          linkRows.every((l) => /\s(ethernet|thunderbolt)\s+\d+(\.\d+)? [MG]bit\/s\s+\d+\.\d\d ms/.test(l)),
          'every link row: type, measured speed, RTT',
        );
        t.equal(linkRows.filter((l) => /thunderbolt/.test(l)).length, 2, 'two thunderbolt rows');
        t.ok(
          linkRows
            .filter((l) => /thunderbolt/.test(l))
            .every((l) => l.includes(lab.linkIp(0, 1)) || l.includes(lab.linkIp(1, 0))),
          'thunderbolt rows are the p2p addresses',
        );
        t.notOk(st.stdout.includes(ids()[3]!), 'the node of the other cluster is not a member');

        // status --json: the API's views
        const sj = await run(follower, ['status', '--json']);
        t.equal(sj.code, 0, 'status --json exits 0');
        const js = JSON.parse(sj.stdout) as {
          node: NodeView['node'];
          topology: NodeView['topology'];
          instances: unknown[];
        };
        t.equal(js.node.id, ids()[follower]);
        t.equal(js.node.role, 'follower');
        t.equal(js.node.leaderId, leader.node.id);
        t.same(js.topology.nodes.map((n) => n.id).sort(), ids().slice(0, 3).sort(), '--json: three nodes');
        t.equal(js.topology.links.length, 8, '--json: eight links');
        t.ok(
          js.topology.links.every(
            (l) =>
              l.type &&
              typeof l.bandwidthBps === 'number' &&
              typeof l.rttMs === 'number' &&
              typeof l.measuredAt === 'number',
          ),
          '--json: links typed and measured',
        );
        t.same(js.instances, [], '--json: no instances yet');

        // peers: the other cluster's node is heard, not joined, with the reason
        const pe = await c.until(
          'the other-cluster node listed by peers',
          async () => {
            const r = await run(0, ['peers', '--json']);
            const j =
              r.code === 0
                ? (JSON.parse(r.stdout) as { peers: { id?: string; address: string; reason: string }[] })
                : null;
            return (
              j?.peers.some((p) => p.id === ids()[3] && p.reason === 'other-cluster') &&
              j.peers.some((p) => p.address === '10.77.0.99:52516' && p.reason === 'unreachable') &&
              j
            );
          },
          30_000,
          1000,
        );
        t.pass('peers --json lists the dead static peer (cluster port = API port + 1) as unreachable');
        t.pass(
          `peers --json lists ${ids()[3]} as other-cluster (${JSON.stringify(pe.peers.find((p) => p.id === ids()[3]))})`,
        );
        const pt = await run(0, ['peers']);
        t.equal(pt.code, 0, 'peers exits 0');
        t.comment(`peers on h0:\n${pt.stdout}`);
        t.match(
          pt.stdout,
          new RegExp(`${ids()[3]}.*other-cluster|other-cluster.*${ids()[3]}`),
          'peers table: id and reason',
        );
        t.match(pt.stdout, /10\.77\.0\.99:52516.*unreachable/, 'peers table: the unreachable static peer');

        // preview: every option, through the API with only a workload (sharding/backend are not needed) and the CLI
        const pv = await c.nodes[follower]!.fetch(`/v1/placements/preview`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workload: { id: 'w', memoryBytes: 1 << 30, layers: 8 } }),
        });
        const pvBody = (await pv.json()) as {
          previews?: { sharding: string; backend: string; nodeCount: number; plan?: unknown }[];
        };
        t.equal(
          pv.status,
          200,
          `POST /v1/placements/preview with only a workload: 200 (${pv.status === 200 ? '' : JSON.stringify(pvBody)})`,
        );
        t.ok(
          pvBody.previews?.some(
            (p) => p.sharding === 'pipeline' && p.backend === 'ring' && p.nodeCount === 3 && p.plan,
          ),
          'a pipeline/ring plan on 3 nodes among the options',
        );
        const cp = await run(follower, ['place', '--preview', '--workload', 'w', '--memory', '1GiB', '--layers', '8']);
        t.equal(cp.code, 0, 'place --preview exits 0');
        t.ok(
          (JSON.parse(cp.stdout) as { previews: unknown[] }).previews.length >= 3,
          'place --preview prints the options',
        );

        // a placement the cluster cannot hold: refused with the planner's reason, exit 1
        const huge = await run(follower, ['place', '--workload', 'huge', '--memory', '4TiB', '--layers', '8']);
        t.equal(huge.code, 1, 'an impossible placement exits 1');
        t.match(huge.stderr, /TORUS_PLACEMENT_REFUSED/, `and names the refusal: ${huge.stderr.trim().split('\n')[0]}`);

        // place an exec workload (sleep 30) from a follower: the leader plans it, runners start on the nodes
        const pl = await run(follower, [
          'place',
          '--workload',
          'sleeper',
          '--memory',
          '64MiB',
          '--layers',
          '3',
          '--min-nodes',
          '3',
          '--exec',
          'sleep',
          '--arg=30',
          '--instance-id',
          'sleep-1',
        ]);
        t.comment(`place on h${follower}:\n${pl.stdout}${pl.stderr}`);
        t.equal(pl.code, 0, 'place exits 0');
        t.match(pl.stdout, /^placed sleep-1 on /, 'place names the instance and its ring order');
        const placed = await c.nodes[0]!.get<{ id: string; nodes: string[] }>('/v1/instances/sleep-1');
        t.ok(
          placed.nodes.length === 3 && placed.nodes.every((n) => ids().slice(0, 3).includes(n)),
          `placed on members: ${placed.nodes.join(', ')}`,
        );
        const onHosts = placed.nodes.map((n) => ids().indexOf(n));

        // runners reach Running on every node of the plan, visible from every member
        const running = await c.until(
          'runners Running everywhere',
          async () => {
            const views = await Promise.all(
              members().map((n) =>
                n.tryGet<{ runners: { node: string; status: string }[]; status: string }>('/v1/instances/sleep-1'),
              ),
            );
            return (
              views.every(
                (v) => v && v.runners.length === placed.nodes.length && v.runners.every((r) => r.status === 'Running'),
              ) && views
            );
          },
          30_000,
          500,
        );
        t.pass(`every runner Running: ${JSON.stringify(running[0]!.runners)}`);
        const sleeps = async (h: number) =>
          (
            await lab.exec(
              h,
              `for p in $(ip netns pids ${lab.hosts[h]!.ns}); do cat /proc/$p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done`,
            )
          ).stdout
            .split('\n')
            .filter((l) => /^sleep 30\b/.test(l));
        for (const h of onHosts)
          t.equal((await sleeps(h)).length, 1, `h${h}: the runner's command (sleep 30) runs in its namespace`);

        const li = await run(2, ['instances']);
        t.equal(li.code, 0, 'instances exits 0');
        t.comment(`instances on h2:\n${li.stdout}`);
        t.match(
          li.stdout,
          new RegExp(
            `sleep-1\\s+ring\\s+pipeline\\s+active\\s+running\\s+${placed.nodes.join(' → ')}\\s+${placed.nodes.length} Running`,
          ),
          'instances: id, backend, sharding, status, job state, ring order, runner counts',
        );
        const ld = await run(2, ['instances', 'sleep-1']);
        t.equal(ld.code, 0, 'instances ID exits 0');
        t.comment(`instances sleep-1 on h2:\n${ld.stdout}`);
        for (const [rank, node] of placed.nodes.entries())
          t.match(
            ld.stdout,
            new RegExp(`\\n\\s*${rank}\\s+${node}\\s+Running\\s+0`),
            `rank ${rank} on ${node}: Running, 0 restarts`,
          );
        const lj = await run(2, ['instances', '--json']);
        t.same(
          (JSON.parse(lj.stdout) as { instances: { id: string }[] }).instances.map((i) => i.id),
          ['sleep-1'],
          'instances --json',
        );

        // delete from another member: gone everywhere, and the runner processes stop
        const de = await run(0, ['delete', 'sleep-1']);
        t.comment(`delete on h0:\n${de.stdout}${de.stderr}`);
        t.equal(de.code, 0, 'delete exits 0');
        t.match(de.stdout, /sleep-1/, 'delete names the instance');
        await c.until(
          'instance gone on every member',
          async () => {
            const all = await Promise.all(members().map((n) => n.tryGet<{ instances: unknown[] }>('/v1/instances')));
            return all.every((x) => x && x.instances.length === 0);
          },
          15_000,
          300,
        );
        t.pass('instance removed on every member');
        await c.until(
          'runner processes stopped',
          async () => (await Promise.all(onHosts.map(sleeps))).every((s) => s.length === 0),
          15_000,
          500,
        );
        t.pass('no sleep 30 left in any namespace');
        const again = await run(0, ['instances', 'sleep-1']);
        t.equal(again.code, 1, 'instances of a deleted id exits 1');
        t.match(again.stderr, /TORUS_INSTANCE_UNKNOWN/, 'and names the reason');
        const gone = await run(0, ['delete', 'sleep-1', '--json']);
        t.equal(gone.code, 1, 'deleting it again exits 1');
        t.match(gone.stdout, /"code":\s*"TORUS_INSTANCE_UNKNOWN"/, '--json error on stdout');

        t.comment(
          `timings: cluster ready (links measured) ${readyMs} ms; slowest CLI call per command (ms): ${JSON.stringify(timings)}`,
        );
      },
    );
  },
);
