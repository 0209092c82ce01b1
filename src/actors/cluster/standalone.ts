/**
 * A cluster node as its own process, without the actor runtime: used by the multi-process lab tests and the
 * cluster-formation benchmark (and handy for debugging discovery). Options come as one JSON argument; the
 * process prints JSON lines on stdout (`started`, `status` on every change, `reply`) and reads JSON-line
 * requests on stdin: `{id, op: 'propose', events}`, `{id, op: 'stop'}`. With `recordApplied` it keeps every entry it
 * applies, and `{id, op: 'applied'}` answers `{ev: 'applied', id, entries, installed}` (the entries in order, the
 * indices of snapshots installed instead of entries): the cluster-writes benchmark checks its acknowledged writes
 * against every node's with it.
 */
import { createInterface } from 'node:readline';
import { asTorusError } from '../../protocols/errors.js';
import type { ClusterState } from '../topology-keeper/state.js';
import { ClusterNode } from './cluster-node.js';
import { loadOrCreateIdentity } from './storage/identity.js';
import { topologyReplica } from './topology-state.js';
import type { Timings } from './agreement/types.js';

interface StandaloneOptions {
  nodeId: string;
  dataDir?: string;
  clusterName?: string;
  secret?: string;
  peers?: string[];
  port?: number;
  mdns?: boolean;
  timings?: Partial<Timings>;
  /** With a dataDir the replicated state is saved there and restored at start, unless this is false. */
  persist?: boolean;
  /** Re-dial backoff for peers that refused us (lab tests shorten it). */
  redial?: { baseMs: number; capMs: number };
  /** Keep every applied entry for the `applied` request (off by default: it grows with the log). */
  recordApplied?: boolean;
}

const out = (o: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ t: Date.now(), ...o })}\n`);
};

async function main(): Promise<void> {
  const o = JSON.parse(process.argv[2] ?? '{}') as StandaloneOptions;
  const identity = o.dataDir
    ? await loadOrCreateIdentity(o.dataDir, { nodeId: o.nodeId })
    : { nodeId: o.nodeId, incarnation: 1 };
  const node = new ClusterNode<ClusterState>({
    nodeId: identity.nodeId,
    incarnation: identity.incarnation,
    clusterName: o.clusterName ?? 'torus',
    replica: topologyReplica,
    secret: o.secret ?? null,
    peers: o.peers ?? [],
    port: o.port ?? 0,
    mdns: o.mdns ?? true,
    timings: o.timings ?? {},
    name: o.nodeId,
    version: 'lab',
    ...(o.dataDir && o.persist !== false ? { persistDir: o.dataDir } : {}),
    ...(o.redial ? { redial: o.redial } : {}),
  });
  const applied: { index: number; event: unknown }[] = [];
  const installed: number[] = [];
  if (o.recordApplied) {
    node.on('applied', (entry: { index: number; event: unknown }) =>
      applied.push({ index: entry.index, event: entry.event }),
    );
    node.on('installed', (snapshot: { index: number }) => installed.push(snapshot.index));
  }
  const port = await node.start();
  out({ ev: 'started', nodeId: identity.nodeId, incarnation: identity.incarnation, port });
  let last = '';
  const status = () => {
    const s = node.state;
    const view = {
      ev: 'status',
      ...node.role(),
      lastIndex: node.lastIndex(),
      digest: node.digest(),
      nodes: Object.values(s.nodes)
        .map((n) => `${n.id}@${n.incarnation}`)
        .sort(),
      links: s.links.length,
      instances: Object.values(s.instances)
        .map((i) => `${i.plan.id}:${i.status}`)
        .sort(),
      members: node.members().map((m) => m.nodeId),
      heard: node.heard().map((h) => ({
        nodeId: h.nodeId,
        reason: h.reason,
        address: h.address,
        at: h.at,
        attempts: h.attempts,
        nextRetryAt: h.nextRetryAt,
      })),
    };
    const key = JSON.stringify(view);
    if (key !== last) {
      last = key;
      out(view);
    }
  };
  const timer = setInterval(status, 50);
  const stop = async (code: number) => {
    clearInterval(timer);
    await node.stop();
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop(0));
  createInterface({ input: process.stdin }).on('line', (line) => {
    let req: { id?: number; op?: string; events?: unknown[] };
    try {
      req = JSON.parse(line) as typeof req;
    } catch {
      return;
    }
    if (req.op === 'stop') return void stop(0);
    if (req.op === 'applied') return out({ ev: 'applied', id: req.id, entries: applied, installed });
    if (req.op === 'propose') {
      node.propose((req.events ?? []) as { type: string }[]).then(
        (result) => out({ ev: 'reply', id: req.id, ok: true, result }),
        (err) => out({ ev: 'reply', id: req.id, ok: false, error: asTorusError(err).toJSON() }),
      );
    }
  });
}

main().catch((err) => {
  process.stderr.write(`standalone cluster node failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
