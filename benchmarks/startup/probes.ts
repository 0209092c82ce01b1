/**
 * One start-up measurement each, in a fresh process so nothing is warm: a worker thread importing one dist module,
 * and a node's start (spawn of `node dist/main.js` to its start line). CPU is read from /proc (Linux), which
 * survives a loaded machine better than wall time: a thread's own on-CPU time (schedstat, ns) for the import, the
 * whole process's utime+stime (all threads, clock ticks) for the node.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface Sample {
  readonly wallMs: number;
  readonly cpuMs: number | null;
}

export interface NodeStartOptions {
  /** extra flags, e.g. the declared device figures that skip the start-up measurement */
  readonly args?: readonly string[];
  /** keep the node running this long after its start line and report the CPU it used up to then */
  readonly settleMs?: number;
}

// Runs in the worker: the import's wall time and this thread's CPU time (first field of schedstat, ns); with
// `frames`, also decoding the first mailbox frames a worker sees (two valid, one refused), as every actor does.
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const cpu = () => { try { return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6; } catch { return NaN; } };
const c0 = cpu(); const t0 = performance.now();
import(workerData.url).then((m) => {
  if (workerData.frames) {
    m.decodeFrame({ t: 'msg', from: 'host', to: 'actor', body: { type: 'start' }, corr: 1 });
    m.decodeFrame({ t: 'stop', deadlineMs: 1000 });
    try { m.decodeFrame({ t: 'msg', from: 7 }); } catch {}
  }
  parentPort.postMessage({ wallMs: performance.now() - t0, cpuMs: cpu() - c0 });
});
`;

/** A fresh `node` whose one worker thread imports `file` (and decodes frames with it); the cost as that worker sees it. */
export function workerImport(file: string, frames = false): Promise<Sample> {
  const parent = `
const { Worker } = require('node:worker_threads');
const w = new Worker(${JSON.stringify(WORKER_CODE)}, { eval: true, workerData: { frames: ${String(frames)}, url: ${JSON.stringify(pathToFileURL(file).href)} } });
w.once('message', (m) => { process.stdout.write(JSON.stringify(m)); w.terminate(); });
w.once('error', (e) => { console.error(e); process.exit(1); });
`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', parent], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`worker import of ${file} exited ${String(code)}`));
      const m = JSON.parse(out) as { wallMs: number; cpuMs: number };
      resolve({ wallMs: m.wallMs, cpuMs: Number.isFinite(m.cpuMs) ? m.cpuMs : null });
    });
  });
}

const TICK_MS = 10; // USER_HZ is 100 on Linux
function processCpuMs(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are fields 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/**
 * Spawns `node <root>/dist/main.js` on loopback (port 0, no multicast, a fresh data dir, a fixed cluster secret)
 * and times it to its start line (`torus node … listening on`), then stops it with SIGTERM (SIGKILL after 15 s).
 * With `settleMs`, the sample is the CPU used up to that long after the start line (wall: the start line's):
 * what runs once the node is listening, such as the device measurement, is then counted.
 */
export async function nodeStart(root: string, options: NodeStartOptions = {}): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'torus-bench-start-'));
  const args = [
    join(root, 'dist/main.js'),
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--no-mdns',
    '--data-dir',
    dataDir,
    '--name',
    'bench-start',
    ...(options.args ?? []),
  ];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TORUS_SECRET: 'startup-benchmark-secret-0123456789abcdef' },
  });
  try {
    return await new Promise<Sample>((resolve, reject) => {
      let out = '';
      let err = '';
      const timer = setTimeout(() => reject(new Error(`no start line after 60 s: ${err}`)), 60_000);
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (!/listening on/.test(out)) return;
        clearTimeout(timer);
        const wallMs = performance.now() - t0;
        if (options.settleMs === undefined) resolve({ wallMs, cpuMs: processCpuMs(child.pid!) });
        else setTimeout(() => resolve({ wallMs, cpuMs: processCpuMs(child.pid!) }), options.settleMs);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`node exited ${String(code)} before its start line: ${err}`));
      });
    });
  } finally {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function stop(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
