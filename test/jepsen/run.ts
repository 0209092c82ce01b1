/**
 * Runs a seeded fault schedule (schedule.ts) against real standalone cluster processes in lab network namespaces,
 * with one client per node writing through it (InstanceCreated / InstanceDeleted proposals, the cluster's own write
 * path: no API, no runners), then heals everything, restarts what was killed, waits for one digest and hands the
 * history and every node's final state, committed log (read from its data dir) and leader terms to checker.ts.
 * Reused by test/jepsen/cluster.test.ts (short) and benchmarks/jepsen-soak (long).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Lab } from '../../src/lab/index.js';
import { parseLog } from '../../src/actors/cluster/storage/stored-state.js';
import { LabCluster, type LabNode } from '../actors/cluster/fixtures/lab-cluster.js';
import { check, type AckedOp, type NodeFinal, type Verdict } from './checker.js';
import { faultSchedule, rng, type Step } from './schedule.js';
import { within } from '../fixtures/within.js';

export interface JepsenOptions {
  readonly seed: number;
  readonly hosts: number;
  readonly faults: number;
  readonly gapMs: number;
  readonly clientEveryMs?: number;
  readonly log?: (line: string) => void;
}

export interface JepsenResult extends Verdict {
  readonly seed: number;
  readonly schedule: readonly Step[];
  readonly attempted: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timings = { failureTimeoutMs: 2000 };

export async function runJepsen(lab: Lab, o: JepsenOptions): Promise<JepsenResult> {
  const say = o.log ?? (() => {});
  const dirs = Array.from({ length: o.hosts }, () => mkdtempSync(join(tmpdir(), 'torus-jepsen-')));
  const c = new LabCluster(lab);
  const all: LabNode[] = [];
  const spawn = (h: number) => {
    const n = c.spawn(h, { nodeId: `j${h}`, dataDir: dirs[h], clusterName: 'jepsen', timings, mdns: true });
    all.push(n);
    return n;
  };
  try {
    for (let h = 0; h < o.hosts; h++) spawn(h);
    await c.until(`${o.hosts} nodes converge`, () => c.converged(o.hosts), 60_000);
    // Fresh nodes may each lead term 1 alone before they meet (no membership yet: docs/cluster.md, Quorum); the
    // one-leader-per-term check starts once they formed one cluster.
    const formedAt = Date.now();
    const schedule = faultSchedule(o.seed, o.hosts, o.faults, o.gapMs);
    say(`seed ${o.seed}: ${JSON.stringify(schedule.map((s) => s.fault))}`);

    const acked: AckedOp[] = [];
    const unsure = new Set<string>();
    let attempted = 0;
    let running = true;
    const r = rng(o.seed ^ 0x5eed);
    const plan = (id: string) => ({
      id,
      backend: 'ring',
      sharding: 'pipeline',
      nodes: ['j0', 'j1'],
      shards: [
        { node: 'j0', rank: 0, worldSize: 2, startLayer: 0, endLayer: 6 },
        { node: 'j1', rank: 1, worldSize: 2, startLayer: 6, endLayer: 12 },
      ],
      port: 50123,
      hostsByNode: { j0: [{ ip: '10.77.0.1', port: 50123 }], j1: [{ ip: '10.77.0.2', port: 50123 }] },
    });
    const workload = { kind: 'ring', id: 'w', memoryBytes: 1000, layers: 12 };
    const client = async (h: number) => {
      const mine: string[] = [];
      for (let k = 0; running; k++) {
        const node = c.nodes.get(h);
        if (!node || node.exited || !node.started) {
          await sleep(200);
          continue;
        }
        const del = mine.length > 0 && r() < 0.3;
        const id = del ? mine.splice(Math.floor(r() * mine.length), 1)[0]! : `c${h}-${k}`;
        const event = del
          ? { type: 'InstanceDeleted', instanceId: id, reason: 'jepsen' }
          : { type: 'InstanceCreated', instance: plan(id), workload };
        attempted++;
        const reply = await within(node.propose([event]), 12_000, null);
        if (reply?.ok) {
          acked.push({ op: del ? 'delete' : 'create', id, at: Date.now() });
          if (!del) mine.push(id);
        } else {
          unsure.add(id); // failed or no answer: it may still commit; its final presence is not checked
        }
        await sleep(o.clientEveryMs ?? 150);
      }
    };
    const clients = Array.from({ length: o.hosts }, (_, h) => client(h));

    const t0 = Date.now();
    for (const step of schedule) {
      await sleep(Math.max(0, t0 + step.at - Date.now()));
      const f = step.fault;
      say(`${Date.now() - t0} ms: ${JSON.stringify(f)}`);
      switch (f.kind) {
        case 'isolate-leader': {
          const leader = c.leader();
          if (!leader) break;
          await lab.cut(leader.host, 'lan');
          await sleep(f.holdMs);
          await lab.restore(leader.host, 'lan');
          break;
        }
        case 'split':
          // The minority hosts are cut off the LAN (each alone): the majority must carry on without them.
          for (const h of f.minority) await lab.cut(h, 'lan');
          await sleep(f.holdMs);
          for (const h of f.minority) await lab.restore(h, 'lan');
          break;
        case 'flap':
          for (let i = 0; i < f.times; i++) {
            await lab.cut(f.host, 'lan');
            await sleep(f.periodMs);
            await lab.restore(f.host, 'lan');
            await sleep(f.periodMs);
          }
          break;
        case 'kill': {
          c.nodes.get(f.host)?.kill9();
          await sleep(f.downMs);
          spawn(f.host);
          break;
        }
      }
    }
    await sleep(2000);
    running = false;
    await Promise.all(clients);
    for (let h = 0; h < o.hosts; h++) await lab.restore(h, 'lan');
    await c.until('one cluster and one digest after the schedule', () => c.converged(o.hosts), 60_000);
    await sleep(1500); // followers learn the last commit index with the next heartbeat
    await c.until('one digest', () => new Set(c.live().map((n) => n.status?.digest)).size === 1, 20_000);

    const finals: NodeFinal[] = c.live().map((n) => {
      const committed = new Map<number, string>();
      // A log that cannot be read fails the run: read as empty, it would leave the committed-prefix check nothing.
      const logFile = join(dirs[n.host]!, 'cluster-state', 'log.jsonl');
      const text = (() => {
        try {
          return readFileSync(logFile, 'utf8');
        } catch (error) {
          throw new Error(`j${n.host}: its log ${logFile} cannot be read: ${(error as Error).message}`);
        }
      })();
      const parsed = parseLog(text);
      const marks = parsed.records.flatMap((x) => (x.record.kind === 'commit' ? [x.record.commit] : []));
      const upTo = Math.max(0, ...marks);
      for (const x of parsed.records)
        if (x.record.kind === 'entry' && x.record.entry.index <= upTo)
          committed.set(x.record.entry.index, JSON.stringify([x.record.entry.term, x.record.entry.event]));
      const leaderTerms = all
        .filter((a) => a.host === n.host)
        .flatMap((a) =>
          a.lines.flatMap((l) => {
            try {
              const m = JSON.parse(l) as { ev?: string; role?: string; term?: number; t?: number };
              return m.ev === 'status' && m.role === 'leader' && typeof m.term === 'number' && (m.t ?? 0) >= formedAt
                ? [m.term]
                : [];
            } catch {
              return [];
            }
          }),
        );
      return {
        name: `j${n.host}`,
        instances: (n.status?.instances ?? []).map((s) => s.split(':')[0]!),
        digest: n.status?.digest ?? '',
        committed,
        leaderTerms: [...new Set(leaderTerms)],
      };
    });
    const verdict = check(
      acked.filter((a) => !unsure.has(a.id)),
      finals,
    );
    return { ...verdict, seed: o.seed, schedule, attempted };
  } finally {
    for (const n of c.live()) n.kill9();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
