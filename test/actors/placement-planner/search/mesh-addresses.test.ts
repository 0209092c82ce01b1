/**
 * The plan's mesh addresses and the torch variables built from them: on a Thunderbolt-style ring of
 * 4 nodes plus a LAN, Gloo's full mesh must go over an address every rank reaches, never a ring cable.
 */
import t, { type Test } from 'tap';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan } from '../../../../src/actors/placement-planner/search/plan-result.js';
import { execEnv, ringHosts } from '../../../../src/actors/runner-supervisor/supervisor/exec-env.js';
import type { RunnerInstance } from '../../../../src/protocols/runner-instance.js';
import { decodeInstancePlan } from '../../../../src/protocols/instance-plan.js';
import { GB, request, type StateJson } from '../../../fixtures/placement/build-state.js';

const IDS = ['a', 'b', 'c', 'd'];
const lanIp = (i: number): string => `10.77.9.${i + 1}`;

/**
 * Nodes a..d, each with one LAN address (`lan0`, reached by all others at 1 Gbit/s) when `lan`, and a
 * point-to-point cable between ring neighbours a–b–c–d–a (each end its own address, 20 Gbit/s).
 */
function cableRing(lan: boolean, extra?: { type: 'wifi'; bw: number }): StateJson {
  const nodes = IDS.map((id, i) => ({
    id,
    memory: { ramAvailable: 4 * GB, ramTotal: 8 * GB },
    interfaces: [
      ...(lan ? [{ name: 'lan0', ip: lanIp(i), type: 'ethernet' }] : []),
      ...(extra ? [{ name: 'wlan0', ip: `10.77.8.${i + 1}`, type: 'wifi' }] : []),
    ],
  }));
  const links: Record<string, unknown>[] = [];
  IDS.forEach((source, s) =>
    IDS.forEach((sink, k) => {
      if (s === k) return;
      if (lan) links.push({ source, sink, ip: lanIp(k), bandwidthBps: 1e9, rttMs: 0.4 });
      if (extra) links.push({ source, sink, ip: `10.77.8.${k + 1}`, bandwidthBps: extra.bw, rttMs: 2 });
    }),
  );
  IDS.forEach((x, i) => {
    const y = IDS[(i + 1) % 4] as string,
      j = (i + 1) % 4;
    const xIp = `10.77.${20 + i}.1`,
      yIp = `10.77.${20 + i}.2`;
    (nodes[i]!.interfaces as unknown[]).push({ name: `tb-${y}`, ip: xIp, type: 'thunderbolt' });
    (nodes[j]!.interfaces as unknown[]).push({ name: `tb-${x}`, ip: yIp, type: 'thunderbolt' });
    links.push(
      { source: x, sink: y, ip: yIp, bandwidthBps: 20e9, rttMs: 0.05 },
      { source: y, sink: x, ip: xIp, bandwidthBps: 20e9, rttMs: 0.05 },
    );
  });
  return { nodes, links };
}

function mustPlan(t: Test, state: StateJson): Plan {
  const result = planPlacement(
    decodePlacementInput(state),
    decodePlacementRequest(request({}, { memoryBytes: 15 * GB })),
    { seed: 3 },
  );
  if (isRefusal(result)) throw new Error(`unexpected refusal: ${result.refusal.message}`);
  t.equal(result.instance.nodes.length, 4, 'all four nodes placed');
  return result;
}

const runnerOf = (p: Plan): RunnerInstance => ({ ...p.instance, workload: { kind: 'exec', command: ['true'] } });
/** The addresses `source` has a link to on `sink` (what it can dial). */
const reachable = (state: StateJson, source: string, sink: string): string[] =>
  state.links.filter((l) => l.source === source && l.sink === sink).map((l) => l.ip as string);
const ifaceOf =
  (state: StateJson, node: string) =>
  (ip: string): string | undefined =>
    ((state.nodes.find((n) => n.id === node)?.interfaces ?? []) as { name: string; ip: string }[]).find(
      (f) => f.ip === ip,
    )?.name;

t.test(
  '4-node cable ring + LAN: MASTER_ADDR and the socket interface are on the LAN, the MLX hostfile stays on the cables',
  async (t) => {
    const state = cableRing(true);
    const p = mustPlan(t, state);
    const order = p.instance.nodes;
    t.same(
      p.instance.meshAddresses,
      Object.fromEntries(IDS.map((id, i) => [id, lanIp(i)])),
      'every node: its LAN address (the cables reach only neighbours)',
    );
    t.same(
      decodeInstancePlan(JSON.parse(JSON.stringify(p.instance)), 'instance').meshAddresses,
      p.instance.meshAddresses,
      'the plan schema keeps it',
    );
    const inst = runnerOf(p);
    const rank0 = order[0] as string;
    for (const [rank, node] of order.entries()) {
      const env = execEnv(inst, node, { hostfilePath: '/h', ifaceOf: ifaceOf(state, node) });
      t.equal(
        env.MASTER_ADDR,
        lanIp(IDS.indexOf(rank0)),
        `rank ${rank}: MASTER_ADDR is rank 0's LAN address, the same on every rank`,
      );
      if (rank !== 0)
        t.ok(
          reachable(state, node, rank0).includes(env.MASTER_ADDR as string),
          `rank ${rank} (${node}) has a link to MASTER_ADDR`,
        );
      t.equal(env.GLOO_SOCKET_IFNAME, 'lan0', `rank ${rank}: Gloo binds the LAN interface`);
      t.equal(env.NCCL_SOCKET_IFNAME, 'lan0');
      t.equal(env.TP_SOCKET_IFNAME, 'lan0');
      // The MLX ring hostfile is unchanged: both neighbours on their cable addresses.
      const hosts = ringHosts(inst, node);
      for (const nb of [(rank + 1) % 4, (rank + 3) % 4]) {
        const ip = hosts[nb]!.split(':')[0] as string;
        t.match(ip, /^10\.77\.2\d\.[12]$/, `rank ${rank}: neighbour ${nb} over its cable`);
        t.ok(reachable(state, node, order[nb] as string).includes(ip));
      }
      t.equal(hosts[(rank + 2) % 4], '198.51.100.1:0', 'the opposite node stays a placeholder');
    }
  },
);

t.test('two common addresses: the faster one by measured bandwidth', async (t) => {
  const state = cableRing(true, { type: 'wifi', bw: 1e8 });
  t.same(
    mustPlan(t, state).instance.meshAddresses,
    Object.fromEntries(IDS.map((id, i) => [id, lanIp(i)])),
    'LAN (1 Gbit/s) over Wi-Fi (0.1)',
  );
  const fastWifi = cableRing(true, { type: 'wifi', bw: 5e9 });
  t.same(
    mustPlan(t, fastWifi).instance.meshAddresses,
    Object.fromEntries(IDS.map((id, i) => [id, `10.77.8.${i + 1}`])),
    'measured 5 Gbit/s Wi-Fi over 1 Gbit/s LAN',
  );
});

t.test('a LAN alone: the mesh address is the ring address', async (t) => {
  const state = cableRing(true);
  state.links = state.links.filter((l) => (l.ip as string).startsWith('10.77.9.'));
  const p = mustPlan(t, state);
  const order = p.instance.nodes;
  for (const [rank, node] of order.entries()) {
    const nb = order[(rank + 1) % 4] as string;
    t.equal(
      p.instance.meshAddresses?.[node],
      p.instance.hostsByNode?.[nb]?.[rank]?.ip,
      `${node}: the address its neighbour dials`,
    );
  }
});

t.test('no address every node reaches: no mesh addresses, the ring-address rule as before', async (t) => {
  const state = cableRing(false);
  const p = mustPlan(t, state);
  t.equal(p.instance.meshAddresses, undefined);
  const inst = runnerOf(p);
  const rank1 = p.instance.nodes[1] as string;
  const env = execEnv(inst, rank1, { hostfilePath: '/h', ifaceOf: ifaceOf(state, rank1) });
  t.equal(env.MASTER_ADDR, p.instance.hostsByNode?.[rank1]?.[0]?.ip, 'rank 1: its own hostfile entry for rank 0');
  t.match(env.GLOO_SOCKET_IFNAME, /^tb-/, 'the interface of its planned (cable) address');
});

t.test("the plan schema: mesh addresses must be IPs of the instance's nodes", async (t) => {
  const p = mustPlan(t, cableRing(true));
  const plain = JSON.parse(JSON.stringify(p.instance)) as Record<string, unknown>;
  t.throws(
    () => decodeInstancePlan({ ...plain, meshAddresses: { zz: '10.77.9.1' } }, 'instance'),
    /meshAddresses\.zz: not a node/,
  );
  t.throws(() => decodeInstancePlan({ ...plain, meshAddresses: { a: 'not-an-ip' } }, 'instance'));
  const { meshAddresses: _, ...older } = plain;
  t.equal(decodeInstancePlan(older, 'instance').meshAddresses, undefined, 'a plan from before the field still decodes');
});
