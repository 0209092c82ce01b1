/**
 * An instance's ports (the ring port and the coordinator's, the next one) lie outside the ports the kernel hands
 * to outgoing connections: this host's ip_local_port_range and every OS's default (Linux 32768-60999, macOS and
 * Windows 49152-65535). Inside it, a runner could find its port held by any connection open on the node.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan } from '../../../../src/actors/placement-planner/search/plan-result.js';
import {
  chooseInstancePort,
  DEFAULT_INSTANCE_PORTS,
  parsePortRange,
  rangesOverlap,
} from '../../../../src/actors/placement-planner/search/ports.js';
import { createRng } from '../../../../src/actors/placement-planner/search/rng.js';
import { hostEphemeralRange, parseEphemeralRange } from '../../../../src/native/ephemeral-ports.js';
import { parseNodeArgs } from '../../../../src/node/config.js';
import { runPlanCommand } from '../../../../src/cli/plan.js';
import { ValidationError } from '../../../../src/protocols/errors.js';
import { both, GB, makeState, request } from '../../../fixtures/placement/build-state.js';

const DEFAULT_EPHEMERAL = [
  { os: 'Linux', min: 32_768, max: 60_999 },
  { os: 'macOS and Windows', min: 49_152, max: 65_535 },
];

const tri = makeState(['a', 'b', 'c'].map((id) => ({ id, mem: 4 * GB })));
both(tri, 'a', 'b', 'ethernet');
both(tri, 'b', 'c', 'ethernet');
both(tri, 'a', 'c', 'ethernet');

function planned(seed: number, options: Partial<Parameters<typeof planPlacement>[2]> = {}): Plan {
  const result = planPlacement(decodePlacementInput(tri), decodePlacementRequest(request({ minNodes: 3 })), {
    seed,
    ...options,
  });
  if (isRefusal(result)) throw new Error(result.refusal.message);
  return result;
}

t.test("every planned port and its successor lie outside this host's ephemeral range", async (t) => {
  const host = hostEphemeralRange();
  if (process.platform === 'linux') t.ok(host, 'read /proc/sys/net/ipv4/ip_local_port_range');
  const ranges = [...DEFAULT_EPHEMERAL, ...(host ? [{ os: 'this host', ...host }] : [])];
  let inside = 0;
  for (let seed = 0; seed < 500; seed++) {
    const { port, hostsByNode } = planned(seed).instance;
    for (const p of [port, port + 1]) for (const r of ranges) if (p >= r.min && p <= r.max) inside++;
    // The ring hostfile carries the same port (the jaccl coordinator and MASTER_PORT take the next one).
    t.ok(
      Object.values(hostsByNode ?? {})
        .flat()
        .every((h) => h.port === port || h.port === 0),
    );
  }
  t.equal(inside, 0, `no port of 500 plans inside ${ranges.map((r) => `${r.os} ${r.min}-${r.max}`).join(', ')}`);
});

t.test('a configured band: the port and the next lie in it, clear of the reserved ports', async (t) => {
  const band = { min: 40_000, max: 40_007 };
  const seen = new Set<number>();
  for (let seed = 0; seed < 400; seed++) {
    const port = chooseInstancePort(createRng(seed), band, [40_003]) as number;
    t.ok(port >= band.min && port + 1 <= band.max, `${port}`);
    t.not(port, 40_003, 'not the reserved port');
    t.not(port, 40_002, 'not the port before it (its successor is the reserved one)');
    seen.add(port);
  }
  t.same([...seen].sort(), [40_000, 40_001, 40_004, 40_005, 40_006], 'every other port is drawn');
  t.equal(chooseInstancePort(createRng(1), { min: 40_002, max: 40_004 }, [40_003]), undefined, 'none left');
  t.throws(
    () => planned(1, { portRange: { min: 40_002, max: 40_004 }, reservedPorts: [40_003] }),
    new ValidationError(
      'config',
      'instancePorts',
      'no port of 40002-40004 is left once the reserved ones are taken out: widen the range',
    ),
  );
  t.equal(planned(3, { portRange: { min: 21_000, max: 21_001 } }).instance.port, 21_000);
});

t.test('the default band is clear of every default ephemeral range; --instance-ports sets another', async (t) => {
  for (const r of DEFAULT_EPHEMERAL) t.notOk(rangesOverlap(DEFAULT_INSTANCE_PORTS, r), r.os);
  t.same(parsePortRange('20000-20100'), { min: 20_000, max: 20_100 });
  t.match(parsePortRange('20000'), /expected MIN-MAX/);
  t.match(parsePortRange('80-90'), /1024-65535/);
  t.match(parsePortRange('30000-30000'), /at least two ports/);
  t.same(parseNodeArgs([], {}).config.instancePorts, DEFAULT_INSTANCE_PORTS);
  t.same(parseNodeArgs(['--instance-ports', '20000-20099'], {}).config.instancePorts, { min: 20_000, max: 20_099 });
  t.throws(() => parseNodeArgs(['--instance-ports', '20000'], {}), /--instance-ports.*expected MIN-MAX/);
});

t.test("the host's range as Linux prints it", async (t) => {
  t.same(parseEphemeralRange('32768\t60999\n'), { min: 32_768, max: 60_999 });
  t.equal(parseEphemeralRange('60999 32768'), undefined);
  t.equal(parseEphemeralRange('junk'), undefined);
  t.equal(hostEphemeralRange('/nonexistent/ip_local_port_range'), undefined);
});

t.test('torus plan --instance-ports: the plan draws its port there; a bad band is a usage error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-plan-ports-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'state.json'), JSON.stringify(tri));
  writeFileSync(join(dir, 'request.json'), JSON.stringify(request({ minNodes: 3 })));
  const run = async (extra: string[]) => {
    let out = '';
    const code = await runPlanCommand(
      ['--state', join(dir, 'state.json'), '--request', join(dir, 'request.json'), ...extra],
      { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true } },
    );
    return { code, out };
  };
  const planned = await run(['--instance-ports', '30000-30001']);
  t.equal(planned.code, 0, planned.out);
  t.equal((JSON.parse(planned.out) as Plan).instance.port, 30_000);
  const bad = await run(['--instance-ports', '30000']);
  t.equal(bad.code, 2);
  t.match(bad.out, /--instance-ports: expected MIN-MAX/);
});
