/**
 * Runs the profiler's client side inside a lab host and prints JSON lines (lab tests and the benchmark use it):
 *   prober.ts '{"peers":[...],"reach":{...},"measure":[{"ip":..,"port":..}],"durationMs":500}'
 * Lines: {"kind":"reach","at":ms,...ReachResult} per result as it completes, {"kind":"reached","at":ms},
 * then {"kind":"measured","ip","rttMs","bps","report"} per measured address, then {"kind":"end"}.
 */
import { performance } from 'node:perf_hooks';
import { measureCapacity, measureRtt } from '../../src/profiler/measure.js';
import { probeReachability, type PeerTarget, type ReachOptions } from '../../src/profiler/reachability.js';

interface Job {
  peers: PeerTarget[];
  reach?: ReachOptions;
  measure?: { ip: string; port: number }[];
  durationMs?: number;
}
const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const out = (o: object): void => void process.stdout.write(JSON.stringify(o) + '\n');
const t0 = performance.now();
for await (const r of probeReachability(job.peers ?? [], { ...job.reach, includeFailures: true })) out({ kind: 'reach', at: performance.now() - t0, ...r });
out({ kind: 'reached', at: performance.now() - t0 });
for (const m of job.measure ?? []) {
  const { rttMs } = await measureRtt(m.ip, m.port, { samples: 7 });
  const report = await measureCapacity(m.ip, m.port, { durationMs: job.durationMs ?? 300, repeats: 2 });
  out({ kind: 'measured', ip: m.ip, rttMs, bps: report.bps, report });
}
out({ kind: 'end' });
