// POST /v1/calibrations end to end on one loopback node: the command runs as a one-rank exec job through the
// runner supervisor, its one result line is recorded in the replicated state (GET /v1/calibrations, the topology),
// hostile output is refused with a reason and stores nothing (every case of the parser: test/protocols/calibration.test.ts), and the real torch script when torch is installed.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startLoopbackNode, type LoopbackNode } from '../fixtures/loopback-node.js';

type Result = { nodeId: string; ok: boolean; reason?: string; figures?: Record<string, number> };

const SCRIPT = fileURLToPath(new URL('../../benchmarks/model-placement/calibrate_torch.py', import.meta.url));
const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

async function calibrate(n: LoopbackNode, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${n.url}/v1/calibrations`, {
    method: 'POST',
    headers: { ...n.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function stored(n: LoopbackNode): Promise<Record<string, Record<string, Record<string, number>>>> {
  const res = await fetch(`${n.url}/v1/calibrations`, { headers: n.auth });
  return ((await res.json()) as { calibrations: Record<string, Record<string, Record<string, number>>> }).calibrations;
}

async function nodeId(n: LoopbackNode): Promise<string> {
  return ((await (await fetch(`${n.url}/v1/node`, { headers: n.auth })).json()) as { id: string }).id;
}

/** A shell one-liner as the calibration command (printf keeps the bytes exact). */
const sh = (script: string): string[] => ['/bin/sh', '-c', script];

t.test('a calibration line is recorded per node and framework; hostile output stores nothing', async (t) => {
  const n = await startLoopbackNode(t, ['--allow-exec']);
  const id = await nodeId(n);
  const hostile: [string, string, RegExp][] = [
    [
      'NaN',
      `echo '{"torusCalibration":1,"framework":"torch","gflops":NaN,"memoryBandwidthGBps":8,"layerOverheadMs":1}'`,
      /not JSON/,
    ],
    [
      'missing',
      `echo '{"torusCalibration":1,"framework":"torch","gflops":3,"layerOverheadMs":1}'`,
      /memoryBandwidthGBps/,
    ],
    [
      'two results',
      `echo '{"torusCalibration":1,"framework":"torch","gflops":3,"memoryBandwidthGBps":8,"layerOverheadMs":1}'; echo '{"torusCalibration":1,"framework":"torch","gflops":4,"memoryBandwidthGBps":8,"layerOverheadMs":1}'`,
      /2 result lines/,
    ],
    ['10 MB line', `head -c 10000000 /dev/zero | tr '\\0' x; echo '"torusCalibration"'`, /more than 1048576/],
    [
      'exit 3',
      `echo '{"torusCalibration":1,"framework":"torch","gflops":3,"memoryBandwidthGBps":8,"layerOverheadMs":1}'; echo oops >&2; exit 3`,
      /the command failed.*oops/,
    ],
  ];
  for (const [what, script, reason] of hostile) {
    const { status, json } = await calibrate(n, { framework: 'torch', command: sh(script) });
    t.equal(status, 200, `${what}: answered`);
    const r = json.results[0] as Result;
    t.equal(r.ok, false, `${what}: refused`);
    t.match(r.reason, reason, `${what}: ${r.reason}`);
    t.same(await stored(n), {}, `${what}: nothing stored`);
  }
  const { json: unknownNode } = await calibrate(n, { framework: 'torch', command: sh('true'), nodes: ['nobody'] });
  t.match(unknownNode.results[0], { nodeId: 'nobody', ok: false, reason: /unknown node/ });

  const good = `echo 'torch says hi'; echo '{"torusCalibration":1,"framework":"torch","gflops":68.5,"memoryBandwidthGBps":8.75,"layerOverheadMs":0.9}'`;
  const { json } = await calibrate(n, { framework: 'torch', command: sh(good) });
  t.match(json.results[0], {
    nodeId: id,
    ok: true,
    figures: { gflops: 68.5, memoryBandwidthGBps: 8.75, layerOverheadMs: 0.9 },
  });
  const held = await stored(n);
  t.match(held[id]?.torch, { gflops: 68.5, memoryBandwidthGBps: 8.75, layerOverheadMs: 0.9 }, 'stored');
  t.ok((held[id]?.torch?.measuredAt ?? 0) > 0);
  const topology = (await (await fetch(`${n.url}/v1/topology`, { headers: n.auth })).json()) as {
    nodes: { id: string; calibrations?: Record<string, unknown> }[];
  };
  t.ok(topology.nodes.find((x) => x.id === id)?.calibrations?.torch, 'the topology shows it');
  const listed = (await (await fetch(`${n.url}/v1/instances`, { headers: n.auth })).json()) as { instances: unknown[] };
  t.same(listed.instances, [], 'every calibration job is deleted after it ran');

  // A workload naming the framework is predicted with those figures on this node.
  const preview = await fetch(`${n.url}/v1/placements/preview`, {
    method: 'POST',
    headers: { ...n.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ workload: { id: 'w', memoryBytes: 1000, layers: 2, framework: 'torch' } }),
  });
  const options = (await preview.json()) as {
    previews?: { plan?: { predicted: { figures?: Record<string, string> } } }[];
  };
  const figures = options.previews?.find((o) => o.plan)?.plan?.predicted.figures;
  t.match(figures?.[id], /^torch calibration \d{4}-/, `the plan names the figures it used: ${JSON.stringify(figures)}`);
});

t.test('a node that refuses exec records nothing and says why', async (t) => {
  const n = await startLoopbackNode(t);
  const { json } = await calibrate(n, { framework: 'torch', command: sh('true') });
  t.equal(json.results[0].ok, false);
  t.match(json.results[0].reason, /exec/);
  t.same(await stored(n), {});
});

t.test('a command that outlives its timeout is stopped, records nothing, and its job is gone', async (t) => {
  const n = await startLoopbackNode(t, ['--allow-exec']);
  const { status, json } = await calibrate(n, { framework: 'torch', command: sh('sleep 60'), timeoutMs: 1000 });
  t.equal(status, 200);
  t.equal(json.results[0].ok, false);
  t.match(json.results[0].reason, /did not end within 1000 ms/);
  t.same(await stored(n), {});
  const instances = (await (await fetch(`${n.url}/v1/instances`, { headers: n.auth })).json()) as {
    instances: unknown[];
  };
  t.same(instances.instances, [], 'the calibration job was deleted');
});

t.test(
  'the torch calibration script',
  { skip: hasTorch ? false : 'no torch: apt-get install python3-torch' },
  async (t) => {
    const n = await startLoopbackNode(t, ['--allow-exec']);
    const id = await nodeId(n);
    const { json } = await calibrate(n, { framework: 'torch', command: ['/usr/bin/python3', SCRIPT] });
    const r = json.results[0] as Result;
    t.equal(r.ok, true, r.reason ?? 'recorded');
    for (const key of ['gflops', 'memoryBandwidthGBps']) t.ok((r.figures?.[key] ?? 0) > 0, `${key} > 0`);
    t.ok((r.figures?.layerOverheadMs ?? -1) >= 0);
    // the loopback ping-pong measured a hop: a message between two processes costs something
    t.ok((r.figures?.hopOverheadMs ?? 0) > 0, 'hopOverheadMs > 0');
    t.ok((await stored(n))[id]?.torch?.hopOverheadMs, 'stored with its hop overhead');
  },
);
