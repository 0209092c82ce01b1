/**
 * Reachability benchmark: time to the first verified link and to all links, for 2–8 peers each with one
 * black-holed address, streamed (async generator) vs one-shot "wait for all probes", side by side.
 * Peers are real probe servers on loopback addresses (127.0.1.k); each black hole is a server that accepts and
 * never answers (127.0.2.k), so the prober sees exactly what a dropped path looks like: nothing until its timeout.
 * With root, `--links` also builds a lab (LAN 1gbit, p2p 5gbit) and compares the profiler's short estimate
 * with iperf3 on the same links.
 *   node build/benchmarks/reachability/index.js [--quick] [--json] [--links]
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createProbeHandler } from '../../src/actors/network-profiler/probes/probe-handler.js';
import { probeAll, probeReachability, type PeerTarget } from '../../src/actors/network-profiler/probes/reachability.js';
import { linkBench, type LinkRow } from './links.js';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const timeoutMs = quick ? 500 : 1000;
const attempts = 3;
const sizes = quick ? [2, 4, 8] : [2, 3, 4, 5, 6, 7, 8];
const repeats = quick ? 1 : 3;

const closers: (() => void)[] = [];
async function listen(server: net.Server, host: string): Promise<number> {
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as AddressInfo).port;
}
async function probeServer(nodeId: string, host: string): Promise<number> {
  const handler = createProbeHandler(() => ({ nodeId, clusterName: 'bench', incarnation: 1 }), { dataKey: null });
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return listen(server, host);
}
async function silentServer(host: string): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return listen(server, host);
}

interface Row {
  peers: number;
  streamedFirstMs: number;
  streamedAllMs: number;
  oneShotFirstMs: number;
  oneShotAllMs: number;
  verified: number;
}

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;

async function run(n: number): Promise<Row> {
  const peers: PeerTarget[] = [];
  for (let k = 1; k <= n; k++) {
    const nodeId = `peer-${k}`;
    const port = await probeServer(nodeId, `127.0.1.${k}`);
    const hole = await silentServer(`127.0.2.${k}`);
    peers.push({ nodeId, port, addresses: [`127.0.1.${k}`, { ip: `127.0.2.${k}`, port: hole }] });
  }
  const opts = { attempts, timeoutMs, retryDelayMs: 100 };
  const sf: number[] = [],
    sa: number[] = [],
    of: number[] = [],
    oa: number[] = [];
  let verified = 0;
  for (let r = 0; r < repeats; r++) {
    let t0 = performance.now();
    let first = NaN,
      lastVerified = NaN,
      count = 0;
    for await (const _res of probeReachability(peers, opts)) {
      const at = performance.now() - t0;
      if (Number.isNaN(first)) first = at;
      lastVerified = at;
      count++;
      // Streaming consumers act on each link at once; the round itself still ends after the black holes.
    }
    sf.push(first);
    sa.push(lastVerified);
    verified = count;
    t0 = performance.now();
    const all = await probeAll(peers, opts);
    const done = performance.now() - t0;
    of.push(done);
    oa.push(done);
    if (all.length !== count) throw new Error(`streamed found ${count}, one-shot ${all.length}`);
  }
  for (const c of closers.splice(0)) c();
  return {
    peers: n,
    streamedFirstMs: median(sf),
    streamedAllMs: median(sa),
    oneShotFirstMs: median(of),
    oneShotAllMs: median(oa),
    verified,
  };
}

const rows: Row[] = [];
for (const n of sizes) rows.push(await run(n));
let links: LinkRow[] | undefined;
if (args.has('--links')) links = await linkBench(quick);

if (args.has('--json')) {
  console.log(JSON.stringify({ timeoutMs, attempts, rows, links }, null, 2));
} else {
  console.log(
    `# reachability: each peer has 1 working + 1 black-holed address; ${attempts} attempts × ${timeoutMs} ms timeout; median of ${repeats}`,
  );
  console.log(
    'peers  verified  streamed first (ms)  one-shot first (ms)  speed-up  streamed all links (ms)  one-shot all (ms)  speed-up',
  );
  for (const r of rows) {
    console.log(
      `${String(r.peers).padStart(5)}  ${String(r.verified).padStart(8)}  ${r.streamedFirstMs.toFixed(1).padStart(19)}  ${r.oneShotFirstMs.toFixed(1).padStart(19)}  ${(r.oneShotFirstMs / r.streamedFirstMs).toFixed(0).padStart(7)}×  ${r.streamedAllMs.toFixed(1).padStart(23)}  ${r.oneShotAllMs.toFixed(1).padStart(17)}  ${(r.oneShotAllMs / r.streamedAllMs).toFixed(0).padStart(7)}×`,
    );
  }
  if (links) {
    console.log('\n# link estimate (profiler short probe) vs iperf3, same lab link');
    console.log('link                 shaped   profiler (Gbit/s)  iperf3 (Gbit/s)  ratio  rtt (ms)');
    for (const l of links)
      console.log(
        `${l.link.padEnd(20)} ${l.rate.padEnd(8)} ${(l.profilerBps / 1e9).toFixed(3).padStart(17)}  ${l.iperfBps === undefined ? '      n/a' : (l.iperfBps / 1e9).toFixed(3).padStart(15)}  ${l.iperfBps ? (l.profilerBps / l.iperfBps).toFixed(2).padStart(5) : '  n/a'}  ${l.rttMs.toFixed(2).padStart(8)}`,
      );
  }
}
