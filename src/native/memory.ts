/** Memory: total/available RAM and swap. Linux /proc/meminfo (MemAvailable); macOS vm_stat + sysctl. Parsers are pure. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { MemoryInfo } from '../protocols/events.js';

export function parseMeminfo(text: string): MemoryInfo {
  const kb = (key: string): number | undefined => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return m?.[1] !== undefined ? Number(m[1]) * 1024 : undefined;
  };
  const ramTotal = kb('MemTotal') ?? 0;
  // Kernels before 3.14 lack MemAvailable: approximate it as free + buffers + page cache.
  const ramAvailable = kb('MemAvailable') ?? (kb('MemFree') ?? 0) + (kb('Buffers') ?? 0) + (kb('Cached') ?? 0);
  return {
    ramTotal,
    ramAvailable: Math.min(ramAvailable, ramTotal),
    swapTotal: kb('SwapTotal') ?? 0,
    swapAvailable: kb('SwapFree') ?? 0,
  };
}

/** `vm_stat`: available = (free + inactive) pages × page size, psutil's definition (what exo reports). */
export function parseVmStat(text: string): { pageSize: number; availableBytes: number } {
  const pageSize = Number(/page size of (\d+) bytes/.exec(text)?.[1] ?? 4096);
  const pages = (label: string): number =>
    Number(new RegExp(`^Pages ${label}:\\s+(\\d+)\\.`, 'm').exec(text)?.[1] ?? 0);
  return { pageSize, availableBytes: (pages('free') + pages('inactive')) * pageSize };
}

/** `sysctl hw.memsize` → bytes. */
export function parseSysctlMemsize(text: string): number {
  return Number(/hw\.memsize:\s*(\d+)/.exec(text)?.[1] ?? 0);
}

/** `sysctl vm.swapusage` → bytes ("total = 2048.00M  used = …  free = …"). */
export function parseSwapUsage(text: string): { total: number; free: number } {
  const unit: Record<string, number> = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };
  const val = (k: string): number => {
    const m = new RegExp(`${k} = ([\\d.]+)([KMGT])`).exec(text);
    return m?.[1] && m[2] ? Math.round(Number(m[1]) * (unit[m[2]] ?? 1)) : 0;
  };
  return { total: val('total'), free: val('free') };
}

/**
 * What a node offers to placements under `--memory-limit`: available and total RAM each capped at the limit
 * (the planner reads `ramAvailable`); swap is left as measured. No limit: the reading unchanged.
 */
export function capMemory(memory: MemoryInfo, limitBytes: number | undefined): MemoryInfo {
  if (limitBytes === undefined) return memory;
  return {
    ...memory,
    ramTotal: Math.min(memory.ramTotal, limitBytes),
    ramAvailable: Math.min(memory.ramAvailable, limitBytes),
  };
}

function sh(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 5000 }, (e, out) => (e ? reject(e) : resolve(String(out)))),
  );
}

export async function readMemory(opts: { procRoot?: string; platform?: NodeJS.Platform } = {}): Promise<MemoryInfo> {
  const platform = opts.platform ?? process.platform;
  if (platform === 'linux') return parseMeminfo(await readFile(`${opts.procRoot ?? '/proc'}/meminfo`, 'utf8'));
  if (platform === 'darwin') {
    const [vm, memsize, swap] = await Promise.all([
      sh('vm_stat', []),
      sh('sysctl', ['hw.memsize']),
      sh('sysctl', ['vm.swapusage']),
    ]);
    const s = parseSwapUsage(swap);
    return {
      ramTotal: parseSysctlMemsize(memsize),
      ramAvailable: parseVmStat(vm).availableBytes,
      swapTotal: s.total,
      swapAvailable: s.free,
    };
  }
  return { ramTotal: os.totalmem(), ramAvailable: os.freemem() };
}
