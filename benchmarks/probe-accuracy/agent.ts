/**
 * Helper process for the probe-accuracy benchmark, run inside lab hosts:
 *   agent server NODE_ID PORT                   probe routes on 0.0.0.0:PORT, prints {"listening":PORT}
 *   agent measure IP PORT MS REPEATS STREAMS    the profiler's capacity probe (stream), prints {"bps","bytes"}
 *   agent upload IP PORT MS REPEATS             the previous probe (HTTP upload to /v1/probe/sink), best of REPEATS
 */
import http from 'node:http';
import { createProbeHandler } from '../../src/actors/network-profiler/probes/probe-handler.js';
import { measureCapacity, measureThroughput } from '../../src/actors/network-profiler/probes/measure.js';

const [mode, a = '', b = '0', c = '300', d = '2', e = '1'] = process.argv.slice(2);
const out = (o: object): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
if (mode === 'server') {
  const handler = createProbeHandler(() => ({ nodeId: a, clusterName: 'bench', incarnation: 1 }), { dataKey: null });
  http
    .createServer((req, res) => {
      if (!handler(req, res)) {
        res.writeHead(404);
        res.end();
      }
    })
    .listen(Number(b), '0.0.0.0', () => out({ listening: Number(b) }));
} else if (mode === 'measure') {
  const r = await measureCapacity(a, Number(b), {
    durationMs: Number(c),
    repeats: Number(d),
    streams: Number(e),
    force: true,
  });
  out({ bps: r.bps, bytes: r.bytes });
} else if (mode === 'upload') {
  let best = 0,
    bytes = 0;
  for (let i = 0; i < Number(d); i++) {
    const r = await measureThroughput(a, Number(b), { durationMs: Number(c), force: true });
    if (r.bps > best) {
      best = r.bps;
      bytes = r.bytes;
    }
  }
  out({ bps: best, bytes });
}
