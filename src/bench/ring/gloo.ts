/**
 * torch Gloo's all_reduce on the same lab hosts, for `bench ring`'s side-by-side comparison:
 * what a user would run instead of torus's ring. One `benchmarks/ring/gloo_rank.py` per namespace with the
 * env:// rendezvous (MASTER_ADDR = host 0's LAN address) and GLOO_SOCKET_IFNAME = the LAN interface: Gloo binds to
 * one interface, so on a ring of point-to-point cables it still runs over the LAN. Needs Debian's python3-torch
 * (found through `python3` on PATH or /usr/bin/python3); without it the result says which package is missing.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type EnvSpawner = (host: number, command: string, args: string[], env: NodeJS.ProcessEnv) => ChildProcess;

export interface GlooRow {
  readonly bytes: number;
  readonly timeUs: number;
  readonly medianUs: number;
  readonly p99Us: number;
  /** GB/s, nccl-tests all-reduce busbw from the mean time (2(n−1)/n × size / time) */
  readonly busbw: number;
}

export type GlooResult =
  | {
      readonly ok: true;
      readonly python: string;
      readonly torch: string;
      readonly iface: string;
      readonly rows: readonly GlooRow[];
    }
  | { readonly ok: false; readonly reason: string };

export const GLOO_MISSING =
  'torch Gloo comparison skipped: python3-torch is not installed (Debian: apt-get install python3-torch)';

/** The gloo_rank.py script: benchmarks/ring/ at the repository root, found from src/, dist/ or build/. */
export function glooScript(from = import.meta.url): string | null {
  let dir = dirname(fileURLToPath(from));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'benchmarks', 'ring', 'gloo_rank.py');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}

/** A python interpreter that can `import torch`, or null. */
export function findTorchPython(
  candidates: readonly string[] = ['python3', '/usr/bin/python3'],
): { python: string; torch: string } | null {
  for (const python of candidates) {
    const r = spawnSync(python, ['-c', 'import torch; print(torch.__version__)'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (r.status === 0) return { python, torch: r.stdout.trim() };
  }
  return null;
}

export interface GlooRun {
  readonly ranks: number;
  readonly sizes: readonly number[];
  readonly warmup: number;
  readonly iters: number;
  readonly masterIp: string;
  readonly port: number;
  readonly iface: string;
  readonly timeoutMs: number;
}

/** Runs Gloo's all_reduce sweep (float32 sum), one process per host; rank 0's times as the table (as the ring's median). */
export async function runGlooAllReduce(
  spawnEnv: EnvSpawner,
  run: GlooRun,
  found = findTorchPython(),
): Promise<GlooResult> {
  if (!found) return { ok: false, reason: GLOO_MISSING };
  const script = glooScript();
  if (!script) return { ok: false, reason: 'torch Gloo comparison skipped: benchmarks/ring/gloo_rank.py not found' };
  const arg = JSON.stringify({ sizes: run.sizes, warmup: run.warmup, iters: run.iters });
  const perRank: { bytes: number; meanUs: number; medianUs: number; p99Us: number }[][] = Array.from(
    { length: run.ranks },
    () => [],
  );
  const errors: string[] = [];
  const children = Array.from({ length: run.ranks }, (_, rank) =>
    spawnEnv(rank, found.python, [script, arg], {
      ...process.env,
      MASTER_ADDR: run.masterIp,
      MASTER_PORT: String(run.port),
      RANK: String(rank),
      WORLD_SIZE: String(run.ranks),
      GLOO_SOCKET_IFNAME: run.iface,
      OMP_NUM_THREADS: '1',
    }),
  );
  const timer = setTimeout(() => {
    for (const c of children) c.kill('SIGKILL');
    errors.push(`timed out after ${run.timeoutMs} ms`);
  }, run.timeoutMs);
  try {
    await Promise.all(
      children.map(
        (child, rank) =>
          new Promise<void>((resolve) => {
            let pending = '',
              stderr = '';
            child.stderr?.on('data', (d: Buffer) => {
              stderr = (stderr + d.toString()).slice(-2000);
            });
            child.stdout?.on('data', (d: Buffer) => {
              pending += d.toString();
              const lines = pending.split('\n');
              pending = lines.pop() ?? '';
              for (const line of lines) {
                try {
                  const m = JSON.parse(line) as {
                    type: string;
                    bytes?: number;
                    meanUs?: number;
                    medianUs?: number;
                    p99Us?: number;
                    message?: string;
                  };
                  if (m.type === 'row')
                    perRank[rank]!.push({
                      bytes: Number(m.bytes),
                      meanUs: Number(m.meanUs),
                      medianUs: Number(m.medianUs),
                      p99Us: Number(m.p99Us),
                    });
                  if (m.type === 'error') errors.push(`rank ${rank}: ${m.message}`);
                } catch {
                  /* a stray non-JSON line (torch warnings) */
                }
              }
            });
            child.once('exit', (code) => {
              if (code !== 0 && !errors.some((e) => e.startsWith(`rank ${rank}`))) {
                errors.push(`rank ${rank} exited ${code}: ${stderr.trim().split('\n').slice(-2).join(' / ')}`);
                // The others would wait for it until Gloo's own timeout: stop the group now.
                for (const c of children)
                  if (c !== child && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
              }
              resolve();
            });
            child.once('error', (e) => {
              errors.push(`rank ${rank}: ${e.message}`);
              resolve();
            });
          }),
      ),
    );
  } finally {
    clearTimeout(timer);
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
  if (errors.length > 0) return { ok: false, reason: `torch Gloo run failed: ${errors.slice(0, 3).join('; ')}` };
  return { ok: true, python: found.python, torch: found.torch, iface: run.iface, rows: glooTable(perRank) };
}

/** One rank's timing of one size, as gloo_rank.py prints it. */
export interface GlooRankRow {
  readonly bytes: number;
  readonly meanUs: number;
  readonly medianUs: number;
  readonly p99Us: number;
}

/** The `row` lines of one rank's gloo_rank.py output (other lines, e.g. torch warnings, are skipped); `error` lines. */
export function parseGlooOutput(text: string): { rows: GlooRankRow[]; errors: string[] } {
  const rows: GlooRankRow[] = [];
  const errors: string[] = [];
  for (const line of text.split('\n')) {
    try {
      const m = JSON.parse(line) as {
        type?: string;
        bytes?: number;
        meanUs?: number;
        medianUs?: number;
        p99Us?: number;
        message?: string;
      };
      if (m.type === 'row')
        rows.push({
          bytes: Number(m.bytes),
          meanUs: Number(m.meanUs),
          medianUs: Number(m.medianUs),
          p99Us: Number(m.p99Us),
        });
      if (m.type === 'error') errors.push(String(m.message));
    } catch {
      /* not a JSON line */
    }
  }
  return { rows, errors };
}

/** Every rank's rows → the table: the mean over ranks of each rank's loop time, like the ring's (nccl-tests -a 1); median and p99 from rank 0. */
export function glooTable(perRank: readonly (readonly GlooRankRow[])[]): GlooRow[] {
  const ranks = perRank.length;
  const factor = (2 * (ranks - 1)) / ranks;
  return (perRank[0] ?? []).map((r0, i) => {
    const timeUs = perRank.reduce((s, rows) => s + (rows[i]?.meanUs ?? r0.meanUs), 0) / ranks;
    return {
      bytes: r0.bytes,
      timeUs,
      medianUs: r0.medianUs,
      p99Us: r0.p99Us,
      busbw: (r0.bytes / (timeUs * 1000)) * factor,
    };
  });
}
