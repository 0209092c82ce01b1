/**
 * Linux interface classification from /sys/class/net (docs/profiler.md). The sysfs root is a parameter so tests run
 * on captured fixture trees (test/fixtures/native/). `classifySysfs` is pure: facts in, type out.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { InterfaceType } from '../protocols/events.js';

/** What sysfs tells about one device (every field optional: virtual devices lack most). */
export interface SysfsFacts {
  readonly name: string;
  /** ARPHRD type: 1 ethernet, 772 loopback, 65534 none (tun, wireguard). */
  readonly arpType?: number;
  readonly speedMbps?: number;
  /** basename of device/driver, e.g. 'e1000e', 'thunderbolt-net'; absent for virtual devices. */
  readonly driver?: string;
  readonly hasDevice: boolean;
  readonly wireless: boolean;
  readonly bridge: boolean;
  readonly tun: boolean;
  /** the class/net link points into /sys/devices/virtual/ */
  readonly virtual: boolean;
  readonly devtype?: string;
}

export interface ClassifiedInterface {
  readonly name: string;
  readonly type: InterfaceType;
  readonly speedMbps?: number;
  /** Why this type: 'override', 'wireless', 'thunderbolt driver', ... (shown by `status` and in docs). */
  readonly reason: string;
  readonly driver?: string;
}

const VIRTUAL_NAME =
  /^(lo|veth|docker|br-|virbr|vnet|tun|tap|wg|tailscale|zt|utun|ifb|dummy|bond|team|vxlan|gre|sit|ip6tnl|cni|flannel|cali|kube)/;

export function classifySysfs(f: SysfsFacts, override?: InterfaceType): ClassifiedInterface {
  const base = {
    name: f.name,
    ...(f.speedMbps !== undefined ? { speedMbps: f.speedMbps } : {}),
    ...(f.driver ? { driver: f.driver } : {}),
  };
  if (override) return { ...base, type: override, reason: 'override' };
  if (f.arpType === 772) return { ...base, type: 'unknown', reason: 'loopback' };
  if (f.wireless || f.devtype === 'wlan') return { ...base, type: 'wifi', reason: 'wireless' };
  if ((f.driver ?? '').startsWith('thunderbolt') || /^thunderbolt\d*$/.test(f.name))
    return { ...base, type: 'thunderbolt', reason: 'thunderbolt driver' };
  if (f.bridge) return { ...base, type: 'unknown', reason: 'bridge (virtual)' };
  if (f.tun) return { ...base, type: 'unknown', reason: 'tun/tap (virtual)' };
  if (f.hasDevice && !f.virtual && f.arpType === 1)
    return { ...base, type: 'ethernet', reason: `physical ethernet (${f.driver ?? 'driver unknown'})` };
  if (f.virtual || !f.hasDevice || VIRTUAL_NAME.test(f.name))
    return { ...base, type: 'unknown', reason: 'virtual device' };
  return { ...base, type: 'unknown', reason: `arp type ${f.arpType ?? '?'}` };
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined; // EINVAL on `speed` of most virtual devices, ENOENT where absent
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

export async function readSysfsFacts(sysRoot: string, name: string): Promise<SysfsFacts> {
  const dir = join(sysRoot, 'class', 'net', name);
  const [typeText, speedText, uevent, link, driverLink, hasDevice, wireless, phy, bridge, tunFlags] = await Promise.all(
    [
      readText(join(dir, 'type')),
      readText(join(dir, 'speed')),
      readText(join(dir, 'uevent')),
      readlink(dir).catch(() => ''),
      readlink(join(dir, 'device', 'driver')).catch(() => ''),
      isDir(join(dir, 'device')),
      isDir(join(dir, 'wireless')),
      isDir(join(dir, 'phy80211')),
      isDir(join(dir, 'bridge')),
      readText(join(dir, 'tun_flags')),
    ],
  );
  const speed = Number(speedText);
  const arpType = Number(typeText);
  const devtype = /^DEVTYPE=(.*)$/m.exec(uevent ?? '')?.[1];
  return {
    name,
    ...(typeText !== undefined && Number.isInteger(arpType) ? { arpType } : {}),
    // -1 (virtio, no carrier) and read errors mean "the OS does not say"
    ...(speedText !== undefined && Number.isFinite(speed) && speed > 0 ? { speedMbps: speed } : {}),
    ...(driverLink ? { driver: basename(driverLink) } : {}),
    ...(devtype ? { devtype } : {}),
    hasDevice,
    wireless: wireless || phy,
    bridge: bridge || devtype === 'bridge',
    tun: tunFlags !== undefined,
    virtual: link.includes('/devices/virtual/'),
  };
}

export async function listSysfsInterfaces(sysRoot = '/sys'): Promise<string[]> {
  try {
    return (await readdir(join(sysRoot, 'class', 'net'))).sort();
  } catch {
    return [];
  }
}

/** Every device under `<sysRoot>/class/net`, classified; `overrides` (name → type) win. */
export async function classifyLinuxInterfaces(
  sysRoot = '/sys',
  overrides: Readonly<Record<string, InterfaceType>> = {},
): Promise<ClassifiedInterface[]> {
  const names = await listSysfsInterfaces(sysRoot);
  const facts = await Promise.all(names.map((n) => readSysfsFacts(sysRoot, n)));
  return facts.map((f) => classifySysfs(f, overrides[f.name]));
}
