/**
 * A standalone artifact peer for lab tests and the benchmark (like src/actors/cluster/standalone.ts): one ArtifactService (the real store, peer routes, transfer and writer) inside a lab namespace,
 * on a static cluster state (the lab's nodes and addresses) instead of a running cluster, so tests and the benchmark
 * exercise the data path without waiting for a cluster to form. `node dist/artifacts/standalone.js CONFIG_JSON`. Commands arrive as JSON lines on stdin, answers leave on stdout:
 *   {"cmd":"add","path","chunkSize"?}        → {"id","bytes","chunks","model"?} (a model directory: its record)
 *   {"cmd":"held","event":ArtifactHeld}      applies a holding to the static state
 *   {"cmd":"fetch","id","upstream"?,"stage"?} → {"done":id,"ms","state","bySource"} when the transfer ends, or {"refused":id,"code","message"};
 *                                            `stage` {fromLayer,toLayer}: only that pipeline stage's chunks of a model
 * and {"transfers":[…]} whenever a transfer's progress changes (checked every 100 ms).
 *   {"cmd":"rm","id"}                        → {"removed":id}
 */
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { applyEvent } from '../actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../actors/topology-keeper/state.js';
import type { ClusterEvent } from '../protocols/events.js';
import { ArtifactService } from './service.js';
import { createLogger } from '../runtime/log.js';
import { CpuPool } from '../runtime/cpu-pool.js';

interface Config {
  nodeId: string;
  dataDir: string;
  port: number;
  key: string;
  nodes: { id: string; ip: string; port?: number }[];
  resume?: boolean;
  stallMs?: number;
}
const config = JSON.parse(process.argv[2]!) as Config;
let state: ClusterState = emptyState;
const apply = (event: ClusterEvent): void => {
  state = applyEvent(state, { index: state.lastIndex + 1, term: 1, event });
};
for (const n of config.nodes)
  apply({
    type: 'NodeJoined',
    nodeId: n.id,
    name: n.id,
    incarnation: 1,
    apiPort: n.port ?? config.port,
    apiAddresses: [{ ip: n.ip, port: n.port ?? config.port }],
    version: 'bench',
  });

const pool = new CpuPool();
const service = new ArtifactService({
  runCpuTask: (task, input) => pool.run(task, input),
  nodeId: config.nodeId,
  nodeName: config.nodeId,
  dataDir: config.dataDir,
  dataKey: config.key,
  log: createLogger({ component: 'artifact-standalone' }),
  ...(config.stallMs ? { stallMs: config.stallMs } : {}),
  // A given state that nothing changes: a condition it does not meet now never comes true.
  cluster: {
    state: async () => state,
    propose: async () => {},
    until: async (done, _timeoutMs, onTimeout) => {
      if (!done(state)) throw onTimeout();
    },
  },
});
const server = createServer((req, res) => {
  if (!service.peerHandler(req, res)) {
    res.writeHead(404);
    res.end();
  }
});
server.listen(config.port, '0.0.0.0', () => process.stdout.write(`${JSON.stringify({ ready: config.nodeId })}\n`));
// Progress and outcome of every transfer (also one resumed at start), one line each time it changes.
let lastReport = '';
setInterval(() => {
  const line = JSON.stringify({
    transfers: service.transfers().transfers.map((t) => ({
      id: t.id,
      state: t.state,
      have: t.have,
      chunks: t.chunks,
      bySource: t.bySource,
      corrupt: t.corrupt,
      error: t.error,
    })),
  });
  if (line !== lastReport) {
    lastReport = line;
    process.stdout.write(`${line}\n`);
  }
}, 100).unref();

const say = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line) as {
    cmd: string;
    path?: string;
    id?: string;
    upstream?: string;
    event?: ClusterEvent;
    chunkSize?: number;
    stage?: { fromLayer: number; toLayer: number };
  };
  void (async () => {
    try {
      if (m.cmd === 'add') {
        const a = await service.store.add(m.path!, {
          name: 'bench',
          ...(m.chunkSize ? { chunkSize: m.chunkSize } : {}),
        });
        say({ id: a.id, bytes: a.bytes, chunks: a.chunks, ...(a.model ? { model: a.model } : {}) });
      } else if (m.cmd === 'held') {
        apply(m.event!);
      } else if (m.cmd === 'fetch') {
        const t0 = performance.now();
        const cpu0 = process.cpuUsage();
        try {
          await service.fetch(m.id!, {
            ...(m.upstream ? { upstream: m.upstream } : {}),
            ...(m.stage ? { stage: m.stage } : {}),
          });
        } catch (error) {
          say({ refused: m.id, code: (error as { code?: string }).code, message: (error as Error).message });
          return;
        }
        for (;;) {
          const s = service.transfer(m.id!);
          if (s && s.state !== 'running' && s.state !== 'preparing') {
            const cpu = process.cpuUsage(cpu0);
            say({
              done: m.id,
              ms: performance.now() - t0,
              cpuMs: (cpu.user + cpu.system) / 1000,
              cpuSysMs: cpu.system / 1000,
              state: s.state,
              bySource: s.bySource,
              error: s.error,
            });
            break;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      } else if (m.cmd === 'rm') {
        service.store.remove(m.id!);
        say({ removed: m.id });
      }
    } catch (error) {
      say({ error: (error as Error).message });
    }
  })();
});
if (config.resume) service.start();
process.stdin.on('end', () => {
  void service
    .close()
    .then(() => pool.close())
    .then(() => server.close(() => process.exit(0)));
});
