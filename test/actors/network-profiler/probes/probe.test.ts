import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createProbeHandler } from '../../../../src/actors/network-profiler/probes/probe-handler.js';
import {
  probeAll,
  probeReachability,
  type ReachResult,
} from '../../../../src/actors/network-profiler/probes/reachability.js';
import { measureRtt, measureThroughput } from '../../../../src/actors/network-profiler/probes/measure.js';
import { httpGetJson } from '../../../../src/actors/network-profiler/probes/http-get.js';
import { steadyRate, median } from '../../../../src/actors/network-profiler/probes/rate.js';
import {
  decodeIdentity,
  decodeNodeIdResponse,
  decodeSinkReport,
  decodeSourceQuery,
} from '../../../../src/protocols/probe.js';

async function probeServer(
  t: { teardown(fn: () => unknown): void },
  nodeId: string,
  host = '127.0.0.1',
): Promise<number> {
  const handler = createProbeHandler(() => ({ nodeId, clusterName: 'c1', incarnation: 7 }), { dataKey: null });
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end('nope');
    }
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** Accepts connections and never answers: a black hole from the prober's point of view. */
async function silentServer(t: { teardown(fn: () => unknown): void }, host = '127.0.0.1'): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as AddressInfo).port;
}

t.test('probe wire decoders are strict', async (t) => {
  t.equal(decodeNodeIdResponse('node-a'), 'node-a');
  for (const bad of [42, '', null, { id: 'x' }, '__proto__ x', 'a'.repeat(300)])
    t.throws(() => decodeNodeIdResponse(bad), { name: 'ValidationError' });
  t.same(decodeIdentity({ nodeId: 'n', clusterName: 'c', incarnation: 3 }), {
    nodeId: 'n',
    clusterName: 'c',
    incarnation: 3,
  });
  t.throws(() => decodeIdentity({ nodeId: 'n', clusterName: 'c', incarnation: 3, extra: 1 }), /unknown field/);
  t.throws(() => decodeSinkReport({ bytes: -1, seconds: 0, steadyBytes: 0, steadySeconds: 0, bps: 0 }), {
    name: 'ValidationError',
  });
  t.same(
    decodeSourceQuery(new URLSearchParams('bytes=10&ms=99999')),
    { bytes: 10, ms: 5000 },
    'clamped to the hard bounds',
  );
  t.throws(() => decodeSourceQuery(new URLSearchParams('bytes=-5')), { name: 'ValidationError' });
});

t.test('steady rate skips the start; median', async (t) => {
  // 1 MB burst at t≈0 (token bucket), then 1 MB per 10 ms (100 MB/s = 800 Mbit/s).
  const samples: [number, number][] = [[0, 1e6]];
  for (let i = 1; i <= 50; i++) samples.push([i * 10, 1e6 + i * 1e6]);
  const r = steadyRate(samples);
  t.ok(Math.abs(r.bps - 800e6) / 800e6 < 0.01, `steady ${r.bps}`);
  t.ok((r.bytes * 8) / r.seconds > 800e6 * 1.01, 'whole-transfer rate is inflated by the burst');
  t.equal(steadyRate([]).bps, 0);
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 2, 3]), 2.5);
});

t.test('probe handler routes', async (t) => {
  const port = await probeServer(t, 'node-a');
  t.equal(
    await httpGetJson('127.0.0.1', port, '/node_id', { timeoutMs: 2000 }),
    'node-a',
    'GET /node_id is a JSON string',
  );
  t.same(await httpGetJson('127.0.0.1', port, '/v1/identity', { timeoutMs: 2000 }), {
    nodeId: 'node-a',
    clusterName: 'c1',
    incarnation: 7,
  });
  await t.rejects(
    httpGetJson('127.0.0.1', port, '/elsewhere', { timeoutMs: 2000 }),
    /HTTP 404/,
    'unhandled paths fall through',
  );
  const rtt = await measureRtt('127.0.0.1', port, { samples: 5 });
  t.equal(rtt.samples.length, 5);
  t.ok(rtt.rttMs > 0 && rtt.rttMs < 1000);
  const up = await measureThroughput('127.0.0.1', port, { durationMs: 200, maxBytes: 8 << 20 });
  t.ok(up.bytes > 0 && up.bytes <= (8 << 20) + 256 * 1024, `bounded in bytes (${up.bytes})`);
  t.ok(up.bps > 0);
  const src = await new Promise<number>((resolve, reject) =>
    http.get({ host: '127.0.0.1', port, path: '/v1/probe/source?bytes=1000000&ms=1000' }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
      });
      res.on('end', () => resolve(n));
      res.on('error', reject);
    }),
  );
  t.equal(src, 1000000, 'source streams exactly the bytes asked for');
});

t.test('reachability: streamed, identity-checked, black holes delay nothing', async (t) => {
  const a = await probeServer(t, 'node-a');
  const b = await probeServer(t, 'node-b', '127.0.0.2');
  const hole = await silentServer(t, '127.0.0.3');
  const peers = [
    { nodeId: 'node-a', port: a, addresses: ['127.0.0.1', { ip: '127.0.0.3', port: hole }] },
    // node-b's port answered on 127.0.0.2 is node-b; asking 127.0.0.1 on node-a's port for "node-b" reaches node-a
    { nodeId: 'node-b', port: b, addresses: ['127.0.0.2', { ip: '127.0.0.1', port: a, type: 'ethernet' as const }] },
  ];
  const t0 = performance.now();
  const results: (ReachResult & { at: number })[] = [];
  for await (const r of probeReachability(peers, { timeoutMs: 300, retryDelayMs: 50, includeFailures: true }))
    results.push({ ...r, at: performance.now() - t0 });
  const ok = results.filter((r) => r.ok);
  t.same(ok.map((r) => `${r.nodeId}@${r.address}`).sort(), ['node-a@127.0.0.1', 'node-b@127.0.0.2']);
  const mismatch = results.find((r) => !r.ok && r.reason === 'mismatch');
  t.match(
    mismatch,
    { address: '127.0.0.1', expectedNodeId: 'node-b', answeredBy: 'node-a', attempts: 1 },
    'another node answering is rejected at once',
  );
  const holeResult = results.find((r) => r.address === '127.0.0.3');
  t.match(holeResult, { ok: false, reason: 'unreachable', attempts: 3 });
  const firstAt = results[0]!.at;
  t.ok(firstAt < 300, `first result after ${firstAt.toFixed(1)} ms, before one probe timeout`);
  t.ok(holeResult!.at >= 900, `black hole gave up after 3 attempts (${holeResult!.at.toFixed(0)} ms)`);
  t.equal(results[results.length - 1]?.address, '127.0.0.3', 'the black hole finished last');
  t.equal(
    ok.some((r) => r.nodeId === 'node-b' && r.address === '127.0.0.1'),
    false,
    'never a link to node-b via node-a',
  );

  const verified = await probeAll(peers, { timeoutMs: 200, retryDelayMs: 10 });
  t.equal(verified.length, 2, 'one-shot gives the same verified set');

  // Breaking out early cancels the rest: the loop ends long before the black hole's timeouts.
  const t1 = performance.now();
  for await (const r of probeReachability(peers, { timeoutMs: 5000 })) {
    t.ok(r.ok);
    break;
  }
  t.ok(performance.now() - t1 < 1000, 'break cancels in-flight probes');
});
