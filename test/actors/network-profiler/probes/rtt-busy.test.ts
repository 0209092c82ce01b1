// RTT samples and capacity probes (docs/profiler.md, "Link measurement"): the echo route says "busy" while the
// node's probe gate is held (a capacity probe fills its port), and measureRtt sets those samples aside, so a
// link's RTT is not the queue of a probe another node runs through the same port at that moment.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProbeHandler } from '../../../../src/actors/network-profiler/probes/probe-handler.js';
import { httpGetJson } from '../../../../src/actors/network-profiler/probes/http-get.js';
import { measureRtt } from '../../../../src/actors/network-profiler/probes/measure.js';
import { PROBE_PATHS, probeBusyChannelName } from '../../../../src/protocols/probe.js';

async function serve(t: { teardown(fn: () => unknown): void }, handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return (server.address() as AddressInfo).port;
}

const answer = (res: http.ServerResponse, word: string): void => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(word));
};

t.test('the echo route answers "busy" while the node announces a transfer, "ok" otherwise', async (t) => {
  const nodeId = `rtt-busy-${process.pid}`;
  const handler = createProbeHandler(() => ({ nodeId, clusterName: 'c1', incarnation: 1 }), { dataKey: null });
  const port = await serve(t, (req, res) => void handler(req, res));
  const echo = () => httpGetJson('127.0.0.1', port, PROBE_PATHS.echo, { timeoutMs: 1000 });
  t.equal(await echo(), 'ok');
  const channel = new BroadcastChannel(probeBusyChannelName(nodeId));
  t.teardown(() => channel.close());
  channel.postMessage({ until: Date.now() + 60_000 });
  await new Promise((r) => setTimeout(r, 50)); // the message crosses to the gate's channel
  t.equal(await echo(), 'busy', 'a transfer announced by this node: busy');
  channel.postMessage({ until: 0 });
  await new Promise((r) => setTimeout(r, 50));
  t.equal(await echo(), 'ok', 'over: ok again');
});

t.test("samples answered busy (a probe's queue in them) do not make the RTT", async (t) => {
  // A peer whose port carries a probe for its first 1.5 s: each answer then waits 200 ms in the queue, says busy.
  let start = 0;
  const port = await serve(t, (_req, res) => {
    start ||= Date.now();
    if (Date.now() - start < 1500) setTimeout(() => answer(res, 'busy'), 200);
    else answer(res, 'ok');
  });
  const r = await measureRtt('127.0.0.1', port, { samples: 7, busyBudgetMs: 10_000 });
  t.equal(r.samples.length, 7, 'seven quiet samples');
  t.ok(r.busySamples >= 3, `${r.busySamples} busy samples set aside`);
  t.ok(r.rttMs < 100, `rtt ${r.rttMs.toFixed(2)} ms: the quiet link's, not the queue's 200 ms`);
});

t.test('a peer busy past the budget: the least sample is the estimate', async (t) => {
  let n = 0;
  const port = await serve(t, (_req, res) => {
    const delay = n++ === 2 ? 20 : 200; // one sample found the queue nearly empty
    setTimeout(() => answer(res, 'busy'), delay);
  });
  const r = await measureRtt('127.0.0.1', port, { samples: 7, busyBudgetMs: 1000 });
  t.equal(r.samples.length, 0);
  t.ok(r.rttMs >= 20 && r.rttMs < 200, `rtt ${r.rttMs.toFixed(1)} ms: the least of the busy samples`);
});
