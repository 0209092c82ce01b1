/**
 * The lab's pure parts: names, the address plan inside 10.77.0.0/16, rate parsing and tbf burst sizing.
 * No I/O here, so the plan is testable without root.
 */
import { TorusError } from '../protocols/errors.js';

/** Every lab's namespaces start with this, followed by the owner's pid: `tlab-<pid>-<tag>-h0`. */
export const LAB_PREFIX = 'tlab';

export interface LinkSpec {
  readonly a: number;
  readonly b: number;
  /** tc rate such as '5gbit'; omitted = unshaped. */
  readonly rate?: string;
  /** Interface label hint for tests (e.g. 'thunderbolt'); the lab itself only records it. */
  readonly label?: string;
}

export interface LabOptions {
  readonly hosts: number;
  readonly lanRate?: string;
  readonly links?: readonly LinkSpec[];
  /** Name tag; random when omitted. Only [a-z0-9], at most 6 characters. */
  readonly tag?: string;
}

export interface HostPlan {
  readonly index: number;
  readonly ns: string;
  readonly lanIf: string;
  readonly swPort: string;
  readonly lanIp: string;
}

export interface LinkPlan {
  readonly k: number;
  readonly a: number;
  readonly b: number;
  readonly ifA: string;
  readonly ifB: string;
  readonly ipA: string;
  readonly ipB: string;
  readonly prefixLen: number;
  readonly rate: string | undefined;
  readonly label: string | undefined;
}

export interface LabPlan {
  readonly id: string;
  readonly swNs: string;
  readonly hosts: readonly HostPlan[];
  readonly links: readonly LinkPlan[];
  readonly lanRate: string | undefined;
}

export const LAN_PREFIX_LEN = 24;

/** `lab.linkIp(a, b)` style key, order-insensitive. */
export const linkKey = (a: number, b: number): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

export function labId(pid: number, tag: string): string {
  return `${LAB_PREFIX}-${pid}-${tag}`;
}

/** Parses a lab namespace name back to its owner pid and id, or undefined when it is not ours. */
export function parseLabNs(name: string, prefix = LAB_PREFIX): { id: string; pid: number } | undefined {
  const m = new RegExp(`^(${escapeRe(prefix)}-(\\d+)-[a-z0-9]+)-(?:sw|h\\d+)$`).exec(name);
  if (!m?.[1] || !m[2]) return undefined;
  return { id: m[1], pid: Number(m[2]) };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function planLab(options: LabOptions, pid: number, tag: string): LabPlan {
  const n = options.hosts;
  if (!Number.isInteger(n) || n < 1 || n > 200)
    throw new TorusError('TORUS_CONFIG_INVALID', `lab: hosts must be 1..200, got ${n}`);
  if (!/^[a-z0-9]{1,6}$/.test(tag))
    throw new TorusError('TORUS_CONFIG_INVALID', `lab: tag must be 1-6 of [a-z0-9], got ${tag}`);
  const id = labId(pid, tag);
  if (options.lanRate !== undefined) parseRate(options.lanRate);
  const hosts: HostPlan[] = [];
  for (let i = 0; i < n; i++) {
    // Interfaces are created directly inside the lab's namespaces, so their names only need to be unique there.
    hosts.push({ index: i, ns: `${id}-h${i}`, lanIf: 'lan0', swPort: `p${i}`, lanIp: `10.77.0.${i + 1}` });
  }
  const seen = new Set<string>();
  const links: LinkPlan[] = [];
  (options.links ?? []).forEach((spec, idx) => {
    const { a, b } = spec;
    if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0 || a >= n || b >= n || a === b) {
      throw new TorusError('TORUS_CONFIG_INVALID', `lab: link ${idx} joins ${a} and ${b}, hosts are 0..${n - 1}`);
    }
    const key = linkKey(a, b);
    if (seen.has(key)) throw new TorusError('TORUS_CONFIG_INVALID', `lab: duplicate link ${key}`);
    seen.add(key);
    if (spec.rate !== undefined) parseRate(spec.rate);
    const k = idx + 1;
    if (k > 254) throw new TorusError('TORUS_CONFIG_INVALID', 'lab: at most 254 point-to-point links');
    links.push({
      k,
      a,
      b,
      ifA: `p2p${k}`,
      ifB: `p2p${k}`,
      ipA: `10.77.${k}.1`,
      ipB: `10.77.${k}.2`,
      prefixLen: 24,
      rate: spec.rate,
      label: spec.label,
    });
  });
  return { id, swNs: `${id}-sw`, hosts, links, lanRate: options.lanRate };
}

const UNITS: Record<string, number> = {
  bit: 1,
  kbit: 1e3,
  mbit: 1e6,
  gbit: 1e9,
  tbit: 1e12,
  bps: 8,
  kbps: 8e3,
  mbps: 8e6,
  gbps: 8e9,
};

/** '1gbit' → 1e9 bits per second (tc's units; 'bps' means bytes per second, as in tc). */
export function parseRate(rate: string): number {
  const m = /^(\d+(?:\.\d+)?)([a-z]+)$/.exec(rate.trim().toLowerCase());
  const unit = m?.[2] !== undefined ? UNITS[m[2]] : undefined;
  if (!m || unit === undefined || !(Number(m[1]) > 0))
    throw new TorusError('TORUS_CONFIG_INVALID', `lab: bad rate ${JSON.stringify(rate)} (use e.g. 200mbit, 1gbit)`);
  return Number(m[1]) * unit;
}

/**
 * tbf burst in bytes. veth hands tbf 64 KiB GSO super-packets and the kernel ticks at HZ=250, so a small bucket
 * starves the link (64kb at 1gbit gave 0.61 Gbit/s here). docs/lab.md: ≥ 1 MB at 1 Gbit/s, ≥ 4 MB at 10 Gbit/s:
 * the larger of 1 MiB and 4 ms worth of traffic.
 */
export function tbfBurstBytes(bitsPerSecond: number): number {
  return Math.max(1 << 20, Math.ceil((bitsPerSecond / 8) * 0.004));
}

/** Smallest bucket a caller may give: two 64 KiB GSO packets (a smaller one could not pass them at all). */
export const MIN_TBF_BURST = 128 * 1024;

/**
 * tbf arguments; `burstBytes` overrides the default bucket. A small bucket gives up some sustained rate (the
 * profiler measures what is left) for fidelity on single transfers: with the default 1 MiB bucket, a 256 KiB
 * message after a pause crosses a 100 Mbit/s link at line rate, which a real 100 Mbit/s link never does.
 */
export function tbfArgs(rate: string, burstBytes?: number): string[] {
  if (burstBytes !== undefined && (!Number.isSafeInteger(burstBytes) || burstBytes < MIN_TBF_BURST))
    throw new TorusError('TORUS_CONFIG_INVALID', `lab: burst must be an integer of at least ${MIN_TBF_BURST} bytes`);
  const burst = burstBytes ?? tbfBurstBytes(parseRate(rate));
  return ['tbf', 'rate', rate, 'burst', String(burst), 'latency', '50ms'];
}
