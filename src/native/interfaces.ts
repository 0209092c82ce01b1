/**
 * This node's interfaces for its profile: classification (sysfs on Linux, networksetup on macOS) joined with the
 * addresses `os.networkInterfaces()` reports. Loopback and link-local-only entries never become profile entries:
 * a peer's loopback must never look like a link.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import type { InterfaceType, NetInterface } from '../protocols/events.js';
import { classifyMacInterfaces } from './networksetup.js';
import { classifyLinuxInterfaces, type ClassifiedInterface } from './sysfs.js';

export type AddressMap = NodeJS.Dict<os.NetworkInterfaceInfo[]>;

export interface DiscoverOptions {
  readonly platform?: NodeJS.Platform;
  readonly sysRoot?: string;
  /** `networksetup -listallhardwareports` output (macOS); read from the command when omitted. */
  readonly hardwarePorts?: string;
  readonly addresses?: AddressMap;
  readonly overrides?: Readonly<Record<string, InterfaceType>>;
}

export interface ProfiledInterface extends NetInterface {
  readonly reason: string;
}

/** Addresses a peer can dial: IPv4 and non-link-local IPv6, never loopback. */
export function usableAddresses(infos: readonly os.NetworkInterfaceInfo[] | undefined): string[] {
  return (infos ?? [])
    .filter((i) => !i.internal && !(i.family === 'IPv6' && /^fe80:/i.test(i.address)))
    .map((i) => i.address);
}

export function joinAddresses(
  classified: readonly ClassifiedInterface[],
  addresses: AddressMap,
  overrides: Readonly<Record<string, InterfaceType>> = {},
): ProfiledInterface[] {
  const byName = new Map(classified.map((c) => [c.name, c]));
  const out: ProfiledInterface[] = [];
  for (const [name, infos] of Object.entries(addresses)) {
    const ips = usableAddresses(infos);
    if (ips.length === 0) continue;
    const c = byName.get(name);
    const type = overrides[name] ?? c?.type ?? 'unknown';
    const reason = overrides[name] ? 'override' : (c?.reason ?? 'not classified by the OS');
    out.push({ name, ips, type, reason, ...(c?.speedMbps !== undefined ? { speedMbps: c.speedMbps } : {}) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

function networksetup(): Promise<string> {
  return new Promise((resolve) =>
    execFile('networksetup', ['-listallhardwareports'], { timeout: 5000 }, (e, out) => resolve(e ? '' : String(out))),
  );
}

export async function discoverInterfaces(opts: DiscoverOptions = {}): Promise<ProfiledInterface[]> {
  const platform = opts.platform ?? process.platform;
  const overrides = opts.overrides ?? {};
  let classified: ClassifiedInterface[] = [];
  if (platform === 'linux') classified = await classifyLinuxInterfaces(opts.sysRoot ?? '/sys', overrides);
  else if (platform === 'darwin')
    classified = classifyMacInterfaces(opts.hardwarePorts ?? (await networksetup()), overrides);
  return joinAddresses(classified, opts.addresses ?? os.networkInterfaces(), overrides);
}
