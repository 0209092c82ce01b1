/**
 * What the soak does to the lab, a step at a time, in a configurable mix (`--mix place=4,ring=1,artifact=1,job=1`):
 *   place     a one-node exec placement of /bin/true; the one before is deleted (the quota stays free)
 *   ring      a ring benchmark across the three nodes (POST /v1/bench/ring: a ring instance, all-reduce at a few
 *             small sizes, the instance deleted), waited for until it is done
 *   artifact  a small artifact (256 KiB of random bytes) added on one node as `artifacts add` does, broadcast to
 *             the two others, waited for until all three hold it, then deleted from every node
 *   job       a three-node exec job (echo on every rank), waited for until it completes, then deleted
 * and `measure`, a re-measure of the links every 20 s whatever the mix. Each step is bounded in time; a step that
 * fails or times out is counted with its reason (`counts()`), never retried or hidden.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { storeRoot } from '../../src/artifacts/layout.js';
import type { NodeProcess } from '../../src/lab/index.js';

export const CHURN_KINDS = ['place', 'ring', 'artifact', 'job', 'measure'] as const;
export type ChurnKind = (typeof CHURN_KINDS)[number];
export type Mix = Readonly<Partial<Record<Exclude<ChurnKind, 'measure'>, number>>>;
export const DEFAULT_MIX: Mix = { place: 4, ring: 1, artifact: 1, job: 1 };

/** `place=4,ring=1,...`: whole-number weights; a kind left out does not run. */
export function parseMix(text: string): Mix {
  const mix: Record<string, number> = {};
  for (const part of text.split(',')) {
    const m = /^(place|ring|artifact|job)=(\d{1,3})$/.exec(part.trim());
    if (!m)
      throw new Error(`--mix takes KIND=N,... with KIND place, ring, artifact or job (got ${JSON.stringify(part)})`);
    mix[m[1]!] = Number(m[2]);
  }
  if (Object.values(mix).every((n) => n === 0)) throw new Error('--mix: at least one kind needs a weight above 0');
  return mix;
}

/** The mix as a cycle of steps, each kind spread out: place=2,ring=1 → place, ring, place. */
export function schedule(mix: Mix): Exclude<ChurnKind, 'measure'>[] {
  const kinds = (Object.entries(mix) as [Exclude<ChurnKind, 'measure'>, number][]).filter(([, n]) => n > 0);
  const out: Exclude<ChurnKind, 'measure'>[] = [];
  const most = Math.max(...kinds.map(([, n]) => n));
  for (let round = 0; round < most; round++) for (const [kind, n] of kinds) if (round < n) out.push(kind);
  return out;
}

export interface KindCount {
  ran: number;
  failed: number;
  lastFailure?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(250);
  }
}

async function json<T>(res: Response, what: string, ok: number[] = [200]): Promise<T> {
  const text = await res.text();
  if (!ok.includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** A request whose answer is only checked for its status. */
async function expect(res: Promise<Response>, what: string, ok: number[]): Promise<void> {
  const r = await res;
  const text = await r.text();
  if (!ok.includes(r.status)) throw new Error(`${what}: HTTP ${r.status} ${text.slice(0, 200)}`);
}

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

export class Churn {
  readonly #nodes: readonly NodeProcess[];
  readonly #ids: readonly string[];
  readonly #counts = new Map<ChurnKind, KindCount>(CHURN_KINDS.map((k) => [k, { ran: 0, failed: 0 }]));
  #previous: string | undefined;
  readonly #tmp = mkdtempSync(join(tmpdir(), 'torus-soak-artifacts-'));

  constructor(nodes: readonly NodeProcess[], ids: readonly string[]) {
    this.#nodes = nodes;
    this.#ids = ids;
  }

  counts(): ReadonlyMap<ChurnKind, Readonly<KindCount>> {
    return this.#counts;
  }

  /** Runs one step of `kind` from node `i % 3`; its outcome is counted. */
  async run(kind: ChurnKind, i: number): Promise<void> {
    const count = this.#counts.get(kind)!;
    try {
      await this.#step(kind, i);
      count.ran += 1;
    } catch (error) {
      count.failed += 1;
      // One line in the table: an HTTP answer's JSON body is folded, and long reasons cut.
      const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
      count.lastFailure = reason.length > 160 ? `${reason.slice(0, 159)}…` : reason;
    }
  }

  close(): void {
    rmSync(this.#tmp, { recursive: true, force: true });
  }

  async #step(kind: ChurnKind, i: number): Promise<void> {
    const node = this.#nodes[i % this.#nodes.length]!;
    switch (kind) {
      case 'place':
        return this.#place(node, i);
      case 'ring':
        return this.#ring(node);
      case 'artifact':
        return this.#artifact(i);
      case 'job':
        return this.#job(node, i);
      case 'measure':
        await json(await node.fetch('/v1/links/measure', { method: 'POST' }), 'measure', [202]);
        return;
    }
  }

  async #place(node: NodeProcess, i: number): Promise<void> {
    const id = `soak-${i}`;
    const res = await node.fetch(
      '/v1/instances',
      post({
        instanceId: id,
        minNodes: 1,
        workload: { id: 'soak', kind: 'exec', memoryBytes: 1 << 20, layers: 1, command: '/bin/true' },
      }),
    );
    const previous = this.#previous;
    this.#previous = res.status === 201 ? id : undefined;
    await json(res, 'place', [201]);
    // The one before has had a second to run: delete it.
    if (previous) await expect(node.fetch(`/v1/instances/${previous}`, { method: 'DELETE' }), 'delete', [200]);
  }

  async #ring(node: NodeProcess): Promise<void> {
    const run = await json<{ id: string }>(
      await node.fetch(
        '/v1/bench/ring',
        post({ nodes: this.#ids, ops: ['all-reduce'], minBytes: 4096, maxBytes: 65536, iterations: 5, warmup: 1 }),
      ),
      'ring',
      [202],
    );
    const done = await until('ring benchmark', 120_000, async () => {
      const r = await json<{ status: string; error?: { message: string } }>(
        await node.fetch(`/v1/bench/ring/${run.id}`),
        'ring status',
      );
      return r.status === 'running' ? undefined : r;
    });
    if (done.status !== 'done') throw new Error(`ring benchmark ${done.status}: ${done.error?.message ?? ''}`);
  }

  async #artifact(i: number): Promise<void> {
    const from = this.#nodes[i % this.#nodes.length]!;
    const file = join(this.#tmp, `soak-${i}.bin`);
    writeFileSync(file, randomBytes(256 * 1024));
    // As `artifacts add` does: into the node's store on its own disk, then the node is told.
    const added = await new ArtifactStore(storeRoot(from.dataDir)).add(file, { name: `soak-${i}` });
    rmSync(file);
    const id = added.id;
    let failed = true;
    try {
      await json(await from.fetch(`/v1/artifacts/${id}/announce`, post({})), 'announce');
      const me = this.#ids[i % this.#nodes.length]!;
      await json(
        await from.fetch(`/v1/artifacts/${id}/broadcast`, post({ nodes: this.#ids.filter((n) => n !== me) })),
        'broadcast',
        [202],
      );
      await until('artifact on every node', 60_000, async () => {
        const a = await json<{ holders: { node: string; complete: boolean }[] }>(
          await from.fetch(`/v1/artifacts/${id}`),
          'artifact',
        );
        return a.holders.filter((h) => h.complete).length === this.#nodes.length ? true : undefined;
      });
      failed = false;
    } finally {
      // Deleted everywhere it got to, even after a failure (then a node that never got it answers 404, and the
      // step's own failure is the one counted): the soak's disk use stays bounded.
      for (const n of this.#nodes) {
        const deleted = expect(n.fetch(`/v1/artifacts/${id}`, { method: 'DELETE' }), 'artifact delete', [200]);
        if (failed) await deleted.catch(() => undefined);
        else await deleted;
      }
    }
  }

  async #job(node: NodeProcess, i: number): Promise<void> {
    const id = `soak-job-${i}`;
    await json(
      await node.fetch(
        '/v1/instances',
        post({
          instanceId: id,
          minNodes: this.#nodes.length,
          workload: {
            id: 'soak-job',
            kind: 'exec',
            memoryBytes: 3 << 20,
            layers: 3,
            command: '/bin/echo',
            args: ['soak job'],
          },
        }),
      ),
      'job',
      [201],
    );
    let failed = true;
    try {
      const state = await until('job end', 60_000, async () => {
        const v = await json<{ job?: { state: string } }>(await node.fetch(`/v1/instances/${id}`), 'job status');
        return v.job?.state === 'completed' || v.job?.state === 'failed' ? v.job.state : undefined;
      });
      if (state !== 'completed') throw new Error(`job ${state}`);
      failed = false;
    } finally {
      const deleted = expect(node.fetch(`/v1/instances/${id}`, { method: 'DELETE' }), 'job delete', [200]);
      if (failed) await deleted.catch(() => undefined);
      else await deleted;
    }
  }
}
