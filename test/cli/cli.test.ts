import t from 'tap';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBenchRingLiveCommand } from '../../src/cli/bench-ring-live.js';
import { runDeleteCommand } from '../../src/cli/delete.js';
import { runInstancesCommand } from '../../src/cli/instances.js';
import { runPeersCommand } from '../../src/cli/peers.js';
import { runPlaceCommand } from '../../src/cli/place.js';
import { runRunCommand } from '../../src/cli/run.js';
import { renderStatus, runStatusCommand } from '../../src/cli/status.js';
import { startApi, TEST_TOKEN } from '../api/fixtures/harness.js';

// The in-process servers accept TEST_TOKEN; the CLI finds it where a user on another machine puts it (see
// test/cli/cli-token.test.ts for the whole lookup and the 401 message).
process.env.TORUS_TOKEN = TEST_TOKEN;

function io(tty = false) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: { write: (s: string) => out.push(s), isTTY: tty }, stderr: { write: (s: string) => err.push(s) } },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

t.test('status: nodes, roles, memory, links with type and speed, instances with runner states', async (t) => {
  const { api } = await startApi(t);
  const c0 = io();
  t.equal(
    await runPlaceCommand(
      ['--api', api.url, '--workload', 'w', '--memory', '1GiB', '--layers', '4', '--instance-id', 'inst-1'],
      c0.io,
    ),
    0,
    c0.err(),
  );
  const c = io();
  t.equal(await runStatusCommand(['--api', api.url], c.io), 0);
  const text = c.out();
  t.match(text, /^node host-node-a \(node-a\): leader, v0\.1\.0-test, up \d+s, event #\d+/);
  t.match(text, /NODES \(3\)/);
  t.match(text, /node-a +host-node-a +leader +8\.0 GiB \/ 16\.0 GiB/);
  t.match(text, /LINKS \(12\)/);
  t.match(text, /host-node-a +host-node-b +10\.77\.1\.2 +thunderbolt +20 Gbit\/s +0\.20 ms/);
  t.match(text, /host-node-a +host-node-b +10\.77\.0\.2 +ethernet +1\.00 Gbit\/s +0\.60 ms/);
  t.match(text, /inst-1 +ring +pipeline +active +host-node-a → host-node-b → host-node-c +host-node-a=Ready/);
  const j = io();
  t.equal(await runStatusCommand(['--api', api.url, '--json'], j.io), 0);
  const json = JSON.parse(j.out());
  t.equal(json.node.id, 'node-a');
  t.equal(json.topology.links.length, 12);
  t.equal(json.instances[0].id, 'inst-1');
});

t.test('status says when the node has no quorum (writes refused), and is quiet about it otherwise', async (t) => {
  const node = { id: 'n1', name: 'one', version: '0.1.0', incarnation: 1, uptimeMs: 5_000, role: 'follower' as const };
  const topology = { nodes: [], links: [], lastIndex: 7 };
  const without = renderStatus(
    { ...node, quorum: { ok: false, members: 3, reached: 1, needed: 2, why: 'reaches 1 of 3 members, needs 2' } },
    topology,
    [],
  );
  t.match(
    without,
    /^node one \(n1\): follower, v0\.1\.0, up 5s, event #7\nNO QUORUM: reaches 1 of 3 members, needs 2 — writes are refused until it returns\n\n/,
  );
  const withQuorum = renderStatus({ ...node, quorum: { ok: true, members: 3, reached: 3, needed: 2 } }, topology, []);
  t.notMatch(withQuorum, /QUORUM/);
  const unanswered = renderStatus(
    {
      ...node,
      role: 'unknown',
      clusterUnavailable: { code: 'TORUS_ACTOR_TIMEOUT', message: 'request role to cluster timed out after 2000 ms' },
    },
    topology,
    [],
  );
  t.match(
    unanswered,
    /^node one \(n1\): unknown, .*\nCLUSTER ACTOR NOT ANSWERING: TORUS_ACTOR_TIMEOUT: request role to cluster timed out after 2000 ms — role and quorum unknown\n/,
  );
});

t.test("status shows a model workload's stages: which layers each placed node holds and how far", async (t) => {
  const node = { id: 'n1', name: 'one', version: '0.1.0', incarnation: 1, uptimeMs: 5_000, role: 'leader' as const };
  const topology = {
    nodes: [
      { id: 'n1', name: 'one' },
      { id: 'n2', name: 'two' },
    ],
    links: [],
  };
  const instance = {
    id: 'llama',
    nodes: ['n1', 'n2'],
    runners: [],
    artifacts: [
      {
        id: 'ab'.repeat(32),
        name: 'tiny-llama',
        bytes: 1000,
        nodes: [
          { node: 'n1', haveBytes: 600, complete: true, layers: [0, 4] },
          { node: 'n2', haveBytes: 100, bytes: 400, complete: false, layers: [4, 8], rateBps: 2048 },
        ],
      },
    ],
  } as unknown as Parameters<typeof renderStatus>[2][number];
  const text = renderStatus(node, topology, [instance]);
  t.match(
    text,
    /\n {2}llama: model tiny-llama: one held \(layers 0-4\), two 25\.0% 100 B at 2\.0 KiB\/s \(layers 4-8\)\n/,
  );
  t.notMatch(renderStatus(node, topology, [{ ...instance, artifacts: [] }]), /model/, 'no model: no line');
});

t.test('place, instances, delete (readable and --json)', async (t) => {
  const { api } = await startApi(t);
  const dir = await mkdtemp(join(tmpdir(), 'torus-cli-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'request.json');
  await writeFile(
    file,
    JSON.stringify({
      workload: { id: 'job', memoryBytes: 2 ** 30, layers: 8, kind: 'exec', command: '/bin/sleep', args: ['60'] },
      instanceId: 'from-file',
    }),
  );
  const p = io();
  t.equal(await runPlaceCommand(['--api', api.url, '--request', file, '--json'], p.io), 0, p.err());
  t.match(JSON.parse(p.out()), { id: 'from-file', workload: { kind: 'exec', command: '/bin/sleep' } });

  const p2 = io();
  t.equal(
    await runPlaceCommand(
      ['--api', api.url, '--workload', 'w2', '--memory', '512MiB', '--layers', '2', '--exec', '/bin/true', '--arg=-x'],
      p2.io,
    ),
    0,
    p2.err(),
  );
  t.match(p2.out(), /^placed inst-\d+ on node-a → node-b → node-c\ninstance inst-\d+: ring \/ pipeline, active\n/);
  t.match(p2.out(), /RANK +NODE +STATUS +EXIT +RESTARTS/);

  const l = io();
  t.equal(await runInstancesCommand(['--api', api.url], l.io), 0);
  t.match(l.out(), /from-file +ring +pipeline +active +running +node-a → node-b → node-c +3 Ready/);
  const one = io();
  t.equal(await runInstancesCommand(['from-file', '--api', api.url, '--json'], one.io), 0);
  t.equal(JSON.parse(one.out()).runners.length, 3);

  const d = io();
  t.equal(await runDeleteCommand(['from-file', '--api', api.url], d.io), 0);
  t.equal(d.out(), 'deleted instance from-file\n');
  const d2 = io();
  t.equal(await runDeleteCommand(['from-file', '--api', api.url], d2.io), 1, 'second delete fails');
  t.match(d2.err(), /error: no instance from-file \(TORUS_INSTANCE_UNKNOWN\)/);
  const d3 = io();
  t.equal(await runDeleteCommand(['from-file', '--api', api.url, '--json'], d3.io), 1);
  t.match(JSON.parse(d3.out()), { error: { code: 'TORUS_INSTANCE_UNKNOWN' } });
});

t.test('place: refusals, previews, usage errors', async (t) => {
  const { api } = await startApi(t);
  const r = io();
  t.equal(await runPlaceCommand(['--api', api.url, '--workload', 'big', '--memory', '1TiB', '--layers', '4'], r.io), 1);
  t.match(r.err(), /error: not enough memory.*\(TORUS_PLACEMENT_REFUSED\)\n {2}- \{"why":"memory"/);
  const pv = io();
  t.equal(
    await runPlaceCommand(
      ['--api', api.url, '--workload', 'w', '--memory', '1GiB', '--layers', '4', '--preview'],
      pv.io,
    ),
    0,
    pv.err(),
  );
  t.ok(Array.isArray(JSON.parse(pv.out()).previews));
  const u = io();
  t.equal(await runPlaceCommand(['--api', api.url, '--workload', 'w', '--layers', '4'], u.io), 2);
  t.match(u.err(), /missing --memory/);
  const u2 = io();
  t.equal(await runPlaceCommand(['--api', api.url, '--bogus'], u2.io), 2);
  t.match(u2.err(), /Unknown option '--bogus'/);
  const v = io();
  t.equal(
    await runPlaceCommand(
      ['--api', api.url, '--workload', 'w', '--memory', '1GiB', '--layers', '4', '--sharding', 'sideways'],
      v.io,
    ),
    1,
  );
  t.match(v.err(), /body sharding: expected one of pipeline, tensor/, 'the API names the field');
  for (const beside of [
    ['--min-nodes', '2'],
    ['--required-nodes', 'node-a'],
  ]) {
    const pin = io();
    t.equal(
      await runPlaceCommand(
        ['--api', api.url, '--workload', 'w', '--memory', '1GiB', '--layers', '4', '--nodes', 'node-a', ...beside],
        pin.io,
      ),
      2,
    );
    t.match(pin.err(), /--nodes pins the whole set: not with --min-nodes or --required-nodes/);
    const run = io();
    t.equal(
      await runRunCommand(
        ['--api', api.url, '--nodes', 'node-a', ...beside, '--', '/bin/true'],
        run.io,
        new EventEmitter(),
      ),
      2,
    );
    t.match(run.err(), /--nodes pins the whole set: not with --min-nodes or --required-nodes/);
  }
  const h = io();
  t.equal(await runPlaceCommand(['--help'], h.io), 0);
  t.match(h.out(), /^usage: torus place/);
});

t.test('peers', async (t) => {
  const { api, node } = await startApi(t);
  node.peerList = [
    { address: '10.77.0.9:52515', id: 'stranger', reason: 'other-cluster', detail: 'cluster "lab2"', at: 0 },
    {
      address: '10.77.0.8:52515',
      reason: 'auth-failure',
      detail: 'wrong secret',
      at: 0,
      attempts: 3,
      nextRetryAt: Date.now() + 80_000,
    },
  ];
  const c = io();
  t.equal(await runPeersCommand(['--api', api.url], c.io), 0);
  t.match(
    c.out(),
    /heard but not joined \(2\)\n {2}ADDRESS +ID +REASON +DETAIL +LAST HEARD +RETRY\n {2}10\.77\.0\.9:52515 +stranger +other-cluster +cluster "lab2" +1970-01-01T00:00:00\.000Z/,
  );
  t.match(
    c.out(),
    /10\.77\.0\.8:52515 +\? +auth-failure +wrong secret +1970-01-01T00:00:00\.000Z +#4 in (79|80) s/,
    'the re-dial backoff is visible',
  );
  const j = io();
  t.equal(await runPeersCommand(['--api', api.url, '--json'], j.io), 0);
  // The wire still carries `at` under its deprecated name too (GET /v1/peers), for clients of the release before.
  t.same(JSON.parse(j.out()), { peers: node.peerList.map((p) => ({ ...p, lastHeardAt: p.at })) });
});

t.test('bench ring --live: progress lines, then the table', async (t) => {
  const { api } = await startApi(t);
  const c = io();
  t.equal(
    await runBenchRingLiveCommand(
      ['--live', '--api', api.url, '--nodes', 'node-a,node-b', '-b', '8', '-e', '64'],
      c.io,
    ),
    0,
    c.err(),
  );
  const progress = c.err().trim().split('\n');
  t.ok(progress.length >= 4, 'one progress line per update');
  t.match(progress.at(-1), /^bench [0-9a-f]{8} done 4\/4 #{20} all-reduce 64 B$/);
  t.match(c.out(), /size +count +type +redop +timeUs +algbw +busbw +wrong\n {2}8 +2 +float +sum/);
  t.match(c.out(), /op: all-reduce/);
  const j = io();
  t.equal(await runBenchRingLiveCommand(['--live', '--api', api.url, '-b', '8', '-e', '16', '--json'], j.io), 0);
  t.match(JSON.parse(j.out()), { status: 'done', result: { rows: [{ size: 8 }, { size: 16 }] } });
  const bad = io();
  t.equal(await runBenchRingLiveCommand(['--live', '--api', api.url, '--nodes', 'node-a,ghost'], bad.io), 1);
  t.match(bad.err(), /no node ghost \(TORUS_NODE_UNKNOWN\)/);
});

t.test('an unreachable API is a clear error, exit 1', async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const c = io();
  t.equal(await runStatusCommand(['--api', `http://127.0.0.1:${port}`], c.io), 1);
  t.match(
    c.err(),
    new RegExp(
      `^error: cannot reach the node API at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); is \`torus start\` running\\?`,
    ),
  );
  const u = io();
  t.equal(await runStatusCommand(['--api', 'not a url'], u.io), 2);
});

t.test('status shows the frameworks each node is calibrated for (torus kernels only: -)', async (t) => {
  const node = { id: 'n1', name: 'one', version: '0.1.0', incarnation: 1, uptimeMs: 5_000, role: 'leader' as const };
  const calibrated = { gflops: 68.5, memoryBandwidthGBps: 8.7, layerOverheadMs: 0.912, measuredAt: 1 };
  const topology = {
    nodes: [
      { id: 'n1', name: 'one', calibrations: { torch: calibrated } },
      { id: 'n2', name: 'two' },
    ],
    links: [],
    lastIndex: 7,
  };
  const text = renderStatus(node, topology, []);
  t.match(text, /CALIBRATED/);
  t.match(text, /n1 +one .*torch 68\.5 GFLOP\/s 8\.7 GB\/s 0\.91 ms\/layer/);
  t.match(text, /n2 +two +\? +\? +\? +-$/m);
});
