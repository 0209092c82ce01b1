/**
 * Runs the real network-profiler actor (worker thread under the runtime) inside a lab host and prints every event
 * it emits as a JSON line {at, event} (plus {snapshot} views). Also serves the probe routes so peers can probe it.
 *   profiler-node.ts '{"nodeId":"node-0","port":7600,"peers":[...],"options":{...}}'
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Runtime } from '../../src/runtime/index.js';
import { siblingModule } from '../../src/runtime/module-url.js';
import { createProbeHandler } from '../../src/profiler/probe-handler.js';

const job = JSON.parse(process.argv[2] ?? '{}') as { nodeId: string; port: number; peers: unknown[]; options?: Record<string, unknown> };
const out = (o: object): void => void process.stdout.write(JSON.stringify(o) + '\n');
const t0 = performance.now();
const handler = createProbeHandler(() => ({ nodeId: job.nodeId, clusterName: 'lab', incarnation: 1 }));
const server = http.createServer((req, res) => { if (!handler(req, res)) { res.writeHead(404); res.end(); } });
await new Promise<void>((r) => server.listen(job.port, '0.0.0.0', r));

const runtime = new Runtime({ nodeId: job.nodeId });
runtime.register('events', (body) => out({ at: performance.now() - t0, event: body }));
runtime.subscribe('network-profiler', (view) => out({ at: performance.now() - t0, snapshot: view }));
await runtime.supervise({
  name: 'network-profiler',
  module: siblingModule(import.meta.url, '../../src/actors/network-profiler/worker'),
  options: { nodeId: job.nodeId, incarnation: 1, peersFrom: 'none', eventsTo: null, notify: ['events'], ...job.options },
});
runtime.send('network-profiler', { type: 'peers', peers: job.peers });
out({ at: performance.now() - t0, ready: true });
const stop = async (): Promise<void> => {
  await runtime.shutdown();
  server.closeAllConnections();
  server.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.stdin.on('data', (d) => { for (const line of String(d).split('\n')) if (line.trim()) runtime.send('network-profiler', JSON.parse(line) as { type: string }); });
