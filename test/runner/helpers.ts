/** Shared test helpers: temp dirs, pid liveness (orphan checks), waiting on a condition. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'torus-runner-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0): look at its state.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every pid in the list is gone (waits a little: the kernel reaps asynchronously). */
export async function allGone(pids: Iterable<number>, timeoutMs = 5000): Promise<number[]> {
  const list = [...pids];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const left = list.filter(alive);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 25));
  }
}

import net from 'node:net';
import { RunnerManager, type ManagerEvent, type RunnerManagerOptions } from '../../src/runner/runner-manager.js';
import type { RunnerInstance, Workload } from '../../src/core/runner/instance.js';
import type { RunnerStatus } from '../../src/core/runner/status.js';

export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise<net.Server>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => resolve(s));
  })));
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** An instance over `nodes` on loopback: every rank listens on its own port (one machine, several ranks). */
export async function loopbackInstance(id: string, nodes: string[], workload: Workload, layers = 12): Promise<RunnerInstance> {
  const ports = await freePorts(nodes.length);
  const n = nodes.length;
  const per = Math.floor(layers / n);
  return {
    id, backend: 'ring', sharding: 'pipeline', nodes, port: ports[0]!, workload,
    shards: nodes.map((node, rank) => ({ node, rank, worldSize: n, startLayer: rank * per, endLayer: rank === n - 1 ? layers : (rank + 1) * per })),
    hostsByNode: Object.fromEntries(nodes.map((node, rank) => [node, nodes.map((_, r) => {
      const left = (rank - 1 + n) % n;
      const right = (rank + 1) % n;
      if (r === rank) return { ip: '0.0.0.0', port: ports[r]! };
      if (r === left || r === right) return { ip: '127.0.0.1', port: ports[r]! };
      return { ip: '198.51.100.1', port: 0 };
    })])),
  };
}

export interface LocalCluster {
  readonly managers: Map<string, RunnerManager>;
  /** Events each node's manager proposed, in order. */
  readonly events: Map<string, ManagerEvent[]>;
  /** All proposals of all nodes, in order, tagged with the node. */
  readonly log: { node: string; at: number; event: ManagerEvent }[];
}

/** Several nodes' managers in one process, statuses "applied" to every other node at once (the cluster's job). */
export function localCluster(t: { teardown(fn: () => Promise<void> | void): void }, nodes: string[], dataDir: string,
  options: Partial<Omit<RunnerManagerOptions, 'nodeId' | 'dataDir' | 'onEvent'>> = {}): LocalCluster {
  const managers = new Map<string, RunnerManager>();
  const events = new Map<string, ManagerEvent[]>();
  const log: LocalCluster['log'] = [];
  for (const node of nodes) {
    events.set(node, []);
    managers.set(node, new RunnerManager({
      ...options, nodeId: node, dataDir: `${dataDir}/${node}`,
      onEvent: (event) => {
        events.get(node)!.push(event);
        log.push({ node, at: Date.now(), event });
        if (event.type !== 'RunnerStatusChanged') return;
        const status = (event.status === 'Failed' ? { state: 'Failed', reason: event.reason ?? '', diagnostics: event.diagnostics ?? [] }
          : event.status === 'Loading' ? { state: 'Loading', layersLoaded: 0, totalLayers: 0 } : { state: event.status }) as RunnerStatus;
        // Applied asynchronously, as the cluster would.
        setImmediate(() => { for (const [other, m] of managers) if (other !== node) m.runnerStatusChanged(event.instanceId, event.nodeId, status); });
      },
    }));
  }
  t.teardown(async () => {
    await Promise.all([...managers.values()].map((m) => m.shutdown()));
    const left = await allGone([...managers.values()].flatMap((m) => m.pids));
    if (left.length) throw new Error(`orphan runner pids: ${left.join(', ')}`);
  });
  return { managers, events, log };
}

export function statesOf(events: readonly ManagerEvent[], instanceId?: string): string[] {
  return events.flatMap((e) => (e.type === 'RunnerStatusChanged' && (!instanceId || e.instanceId === instanceId) ? [e.status] : []));
}
