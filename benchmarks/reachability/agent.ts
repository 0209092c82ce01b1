/**
 * Helper process for the link part of the reachability benchmark, run inside lab hosts:
 *   agent server NODE_ID PORT     probe routes on 0.0.0.0:PORT, prints {"listening":PORT}
 *   agent measure IP PORT MS      RTT + throughput to IP:PORT, prints {"rttMs","bps"}
 */
import http from 'node:http';
import { createProbeHandler } from '../../src/actors/network-profiler/probes/probe-handler.js';
import { measureCapacity, measureRtt } from '../../src/actors/network-profiler/probes/measure.js';

const [mode, a = '', b = '0', c = '500', d = '1'] = process.argv.slice(2);
if (mode === 'server') {
  const handler = createProbeHandler(() => ({ nodeId: a, clusterName: 'bench', incarnation: 1 }), { dataKey: null });
  http
    .createServer((req, res) => {
      if (!handler(req, res)) {
        res.writeHead(404);
        res.end();
      }
    })
    .listen(Number(b), '0.0.0.0', () => process.stdout.write(`${JSON.stringify({ listening: Number(b) })}\n`));
} else if (mode === 'measure') {
  const { rttMs } = await measureRtt(a, Number(b), { samples: 7 });
  const r = await measureCapacity(a, Number(b), { durationMs: Number(c), repeats: 2, streams: Number(d) });
  process.stdout.write(`${JSON.stringify({ rttMs, bps: r.bps, bytes: r.bytes })}\n`);
}
