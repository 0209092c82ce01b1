/**
 * The ports this host's kernel hands to outgoing connections (Linux: /proc/sys/net/ipv4/ip_local_port_range).
 * A listener planned inside it can find its port taken by any connection open at that moment.
 */
import { readFileSync } from 'node:fs';

export const LINUX_EPHEMERAL_RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';

/** `32768\t60999` → {min, max}; undefined for anything else. */
export function parseEphemeralRange(text: string): { min: number; max: number } | undefined {
  const m = /^\s*(\d{1,5})\s+(\d{1,5})\s*$/.exec(text);
  if (!m) return undefined;
  const min = Number(m[1]);
  const max = Number(m[2]);
  return min <= max && max <= 65_535 ? { min, max } : undefined;
}

/** This host's ephemeral range, or undefined where it cannot be read (not Linux, no /proc). */
export function hostEphemeralRange(file = LINUX_EPHEMERAL_RANGE_FILE): { min: number; max: number } | undefined {
  try {
    return parseEphemeralRange(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // macOS and Windows keep theirs elsewhere (49152-65535 by default); nothing to check here
  }
}
