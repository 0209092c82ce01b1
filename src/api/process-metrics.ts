import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { type Exposition, series } from './prometheus-text.js';

/**
 * The process metrics every Prometheus user expects from a Node service, under the names the official
 * client libraries use (process_* from the Prometheus conventions, nodejs_* as prom-client spells them), so
 * existing dashboards and alerts work unchanged. Linux-only values (/proc) are left out elsewhere.
 */
export interface ProcessSample {
  readonly cpuUserSeconds: number;
  readonly cpuSystemSeconds: number;
  readonly residentBytes: number;
  readonly heapTotalBytes: number;
  readonly heapUsedBytes: number;
  readonly externalBytes: number;
  /** From /proc/self/status: VmData (the process's data segment, what process_heap_bytes means) and VmSize. */
  readonly dataSegmentBytes: number | undefined;
  readonly virtualBytes: number | undefined;
  readonly openFds: number | undefined;
  readonly maxFds: number | undefined;
  readonly startTimeSeconds: number;
  /** Seconds a setImmediate took to run when this sample was taken. */
  readonly eventLoopLagSeconds: number;
  /** Event-loop delay beyond the monitor's timer period since the previous sample, seconds. */
  readonly eventLoopDelay: {
    readonly min: number;
    readonly max: number;
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
  };
  readonly activeResources: Readonly<Record<string, number>>;
  readonly nodeVersion: string;
}

/** The delay monitor's timer period. Its histogram records whole timer intervals, so this is subtracted. */
const RESOLUTION_MS = 10;
const startTimeSeconds = Math.round(Date.now() / 1000 - process.uptime());
let delay: IntervalHistogram | undefined;

/**
 * Starts the event-loop delay monitor (idempotent; its timer does not keep the process alive). The API server
 * module calls it at load so the first scrape already has a window to report.
 */
export function startEventLoopMonitor(): void {
  if (delay) return;
  delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
}

function readProcFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // not Linux, or /proc not mounted
  }
}

function statusBytes(status: string | undefined, field: string): number | undefined {
  const kib = status?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}

function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length - 1; // minus the descriptor readdir itself held open
  } catch {
    return undefined;
  }
}

function maxFds(): number | undefined {
  const soft = readProcFile('/proc/self/limits')?.match(/^Max open files\s+(\S+)/m)?.[1];
  if (soft === undefined) return undefined;
  return soft === 'unlimited' ? Infinity : Number(soft);
}

const lagOnce = (): Promise<number> =>
  new Promise((resolve) => {
    const start = process.hrtime.bigint();
    setImmediate(() => resolve(Number(process.hrtime.bigint() - start) / 1e9));
  });

/** Reads the histogram since the previous sample and starts a new window. */
function delayWindow(): ProcessSample['eventLoopDelay'] {
  startEventLoopMonitor();
  const h = delay!;
  const beyond = (ns: number): number =>
    h.count === 0 || !Number.isFinite(ns) ? 0 : Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1000;
  const window = {
    min: beyond(h.min),
    max: beyond(h.max),
    mean: beyond(h.mean),
    p50: beyond(h.percentile(50)),
    p90: beyond(h.percentile(90)),
    p99: beyond(h.percentile(99)),
  };
  h.reset();
  return window;
}

export async function sampleProcess(): Promise<ProcessSample> {
  const eventLoopLagSeconds = await lagOnce();
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  const status = readProcFile('/proc/self/status');
  const activeResources: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) activeResources[type] = (activeResources[type] ?? 0) + 1;
  return {
    cpuUserSeconds: cpu.user / 1e6,
    cpuSystemSeconds: cpu.system / 1e6,
    residentBytes: memory.rss,
    heapTotalBytes: memory.heapTotal,
    heapUsedBytes: memory.heapUsed,
    externalBytes: memory.external,
    dataSegmentBytes: statusBytes(status, 'VmData'),
    virtualBytes: statusBytes(status, 'VmSize'),
    openFds: openFds(),
    maxFds: maxFds(),
    startTimeSeconds,
    eventLoopLagSeconds,
    eventLoopDelay: delayWindow(),
    activeResources,
    nodeVersion: process.versions.node,
  };
}

export function renderProcessMetrics(out: Exposition, s: ProcessSample): void {
  out
    .single('process_cpu_user_seconds_total', 'counter', 'Total user CPU time spent in seconds.', s.cpuUserSeconds)
    .single(
      'process_cpu_system_seconds_total',
      'counter',
      'Total system CPU time spent in seconds.',
      s.cpuSystemSeconds,
    )
    .single(
      'process_cpu_seconds_total',
      'counter',
      'Total user and system CPU time spent in seconds.',
      s.cpuUserSeconds + s.cpuSystemSeconds,
    )
    .single(
      'process_start_time_seconds',
      'gauge',
      'Start time of the process since unix epoch in seconds.',
      s.startTimeSeconds,
    )
    .single('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', s.residentBytes)
    .single('process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.', s.virtualBytes)
    .single('process_heap_bytes', 'gauge', 'Process heap size (data segment) in bytes.', s.dataSegmentBytes)
    .single('process_open_fds', 'gauge', 'Number of open file descriptors.', s.openFds)
    .single('process_max_fds', 'gauge', 'Maximum number of open file descriptors.', s.maxFds)
    .single('nodejs_heap_size_total_bytes', 'gauge', 'Process heap size from Node.js in bytes.', s.heapTotalBytes)
    .single('nodejs_heap_size_used_bytes', 'gauge', 'Process heap size used from Node.js in bytes.', s.heapUsedBytes)
    .single('nodejs_external_memory_bytes', 'gauge', 'Node.js external memory size in bytes.', s.externalBytes)
    .single(
      'nodejs_eventloop_lag_seconds',
      'gauge',
      'Lag of event loop in seconds (a setImmediate at scrape time).',
      s.eventLoopLagSeconds,
    );
  const d = s.eventLoopDelay;
  const window = 'since the previous scrape, beyond the 10 ms monitor period, in seconds';
  for (const [key, value] of [
    ['min', d.min],
    ['max', d.max],
    ['mean', d.mean],
    ['p50', d.p50],
    ['p90', d.p90],
    ['p99', d.p99],
  ] as const) {
    out.single(
      `nodejs_eventloop_lag_${key}_seconds`,
      'gauge',
      `The ${key} of the recorded event loop delays ${window}.`,
      value,
    );
  }
  const types = Object.keys(s.activeResources).sort();
  // No nodejs_active_resources_total (prom-client has one): promtool rejects _total on a gauge; sum() gives it.
  out.family(
    'nodejs_active_resources',
    'gauge',
    'Number of active resources keeping the event loop alive, grouped by async resource type.',
    types.map((type) => series('nodejs_active_resources', { type }, s.activeResources[type] ?? 0)),
  );
  const [major, minor, patch] = s.nodeVersion.split('.').map(Number);
  out.single('nodejs_version_info', 'gauge', 'Node.js version info.', 1, {
    version: `v${s.nodeVersion}`,
    major,
    minor,
    patch,
  });
}
