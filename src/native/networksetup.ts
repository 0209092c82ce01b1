/** macOS interface classification from `networksetup -listallhardwareports` (parsed text; tested on captures). */
import type { InterfaceType } from '../protocols/events.js';
import type { ClassifiedInterface } from './sysfs.js';

export interface HardwarePort {
  readonly port: string;
  readonly device: string;
  readonly mac?: string;
}

export function parseHardwarePorts(text: string): HardwarePort[] {
  const ports: HardwarePort[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const port = /^Hardware Port:\s*(.+)$/m.exec(block)?.[1]?.trim();
    const device = /^Device:\s*(.+)$/m.exec(block)?.[1]?.trim();
    const mac = /^Ethernet Address:\s*(.+)$/m.exec(block)?.[1]?.trim();
    if (port && device) ports.push({ port, device, ...(mac && mac !== 'N/A' ? { mac } : {}) });
  }
  return ports;
}

/** The rules (exo's, kept): Wi-Fi; Thunderbolt N / Thunderbolt Bridge; Ethernet or LAN; other en* beyond en0/en1. */
export function classifyHardwarePort(p: HardwarePort): { type: InterfaceType; reason: string } {
  if (/^wi-?fi$|airport/i.test(p.port)) return { type: 'wifi', reason: `port "${p.port}"` };
  if (/^thunderbolt( \d+| bridge)$/i.test(p.port)) return { type: 'thunderbolt', reason: `port "${p.port}"` };
  if (/ethernet|\blan\b/i.test(p.port)) return { type: 'ethernet', reason: `port "${p.port}"` };
  const en = /^en(\d+)$/.exec(p.device);
  if (en && Number(en[1]) > 1) return { type: 'maybe_ethernet', reason: `port "${p.port}" on ${p.device}` };
  return { type: 'unknown', reason: `port "${p.port}"` };
}

export function classifyMacInterfaces(
  text: string,
  overrides: Readonly<Record<string, InterfaceType>> = {},
): ClassifiedInterface[] {
  return parseHardwarePorts(text).map((p) => {
    const override = overrides[p.device];
    const c = override ? { type: override, reason: 'override' } : classifyHardwarePort(p);
    return { name: p.device, ...c };
  });
}
