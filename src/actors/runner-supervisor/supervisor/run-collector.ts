/**
 * Removes the directories of finished runs from `<dataDir>/runners/` (finished-runs.ts decides which): past the
 * retention on every pass, and at once, oldest first, while the data dir's filesystem is fuller than the
 * threshold. A pass never throws: a directory that cannot be read or removed is skipped and tried again later.
 */
import { readdir, rm, stat, statfs } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { RunRetention } from '../../../protocols/run-retention.js';
import { runnerDir } from '../shared/run-dir.js';
import { mayRunAgain, oldestFirst, pastRetention, type InstanceFacts, type RunDir } from './finished-runs.js';

export interface CollectorDeps {
  readonly dataDir: string;
  readonly nodeId: string;
  readonly retention: RunRetention;
  /** Told of every directory removed and why. */
  readonly onRemoved?: (name: string, why: 'retention' | 'low disk') => void;
}

export interface CollectInput {
  /** The cluster state's instances (id → status, workload). */
  readonly instances: Readonly<Record<string, InstanceFacts>>;
  /** Instances this node's runner manager holds a runner of. */
  readonly held: Iterable<string>;
  readonly nowMs?: number;
}

/** Percent of the filesystem holding `path` in use (blocks the user cannot have counted as used), or undefined. */
export async function diskUsagePercent(path: string): Promise<number | undefined> {
  try {
    const fs = await statfs(path);
    return fs.blocks > 0 ? ((fs.blocks - fs.bavail) / fs.blocks) * 100 : undefined;
  } catch {
    return undefined;
  }
}

export class RunCollector {
  readonly #d: CollectorDeps;
  #running = false;

  constructor(deps: CollectorDeps) {
    this.#d = deps;
  }

  /** One pass; answers the directory names removed. Passes do not overlap (a second call meanwhile does nothing). */
  async collect(input: CollectInput): Promise<string[]> {
    if (this.#running) return [];
    this.#running = true;
    try {
      const finished = await this.#finished(input);
      const removed: string[] = [];
      const gone = new Set<string>();
      for (const run of pastRetention(finished, this.#d.retention, input.nowMs ?? Date.now()))
        if (await this.#remove(run, 'retention')) {
          removed.push(run.name);
          gone.add(run.name);
        }
      const threshold = this.#d.retention.diskUsagePercent;
      if (threshold < 100)
        for (const run of oldestFirst(finished.filter((r) => !gone.has(r.name)))) {
          const used = await diskUsagePercent(this.#d.dataDir);
          if (used === undefined || used < threshold) break;
          if (await this.#remove(run, 'low disk')) removed.push(run.name);
        }
      return removed;
    } finally {
      this.#running = false;
    }
  }

  async #finished(input: CollectInput): Promise<RunDir[]> {
    const root = join(this.#d.dataDir, 'runners');
    const protectedNames = new Set<string>();
    const protect = (id: string): void => {
      protectedNames.add(basename(runnerDir(this.#d.dataDir, id, this.#d.nodeId)));
    };
    for (const id of input.held) protect(id);
    for (const [id, record] of Object.entries(input.instances)) if (mayRunAgain(record)) protect(id);
    let names: string[];
    try {
      names = await readdir(root);
    } catch {
      return []; // no runner has run here yet
    }
    const runs: RunDir[] = [];
    for (const name of names) {
      if (protectedNames.has(name)) continue;
      const lastWriteMs = await lastWrite(join(root, name));
      if (lastWriteMs !== undefined) runs.push({ name, lastWriteMs });
    }
    return runs;
  }

  async #remove(run: RunDir, why: 'retention' | 'low disk'): Promise<boolean> {
    try {
      await rm(join(this.#d.dataDir, 'runners', run.name), { recursive: true, force: true });
      this.#d.onRemoved?.(run.name, why);
      return true;
    } catch {
      return false;
    }
  }
}

/** The newest modification time in a runner directory (its files are flat), or undefined when it is not one. */
async function lastWrite(dir: string): Promise<number | undefined> {
  try {
    const own = await stat(dir);
    if (!own.isDirectory()) return undefined;
    let newest = own.mtimeMs;
    for (const name of await readdir(dir)) {
      const file = await stat(join(dir, name)).catch(() => undefined);
      if (file) newest = Math.max(newest, file.mtimeMs);
    }
    return newest;
  } catch {
    return undefined;
  }
}
