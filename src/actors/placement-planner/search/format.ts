import { RING_TYPE_PRIORITY, scoreBandwidth } from './address-choice.js';
import type { InterfaceType } from './placement-input.js';

/** Human figures for explanations and refusals (bytes in GB as exo prints them, with the exact count). */
export function formatBytes(bytes: number): string {
  return bytes >= 1e7 ? `${(bytes / 1e9).toFixed(2)} GB (${bytes} bytes)` : `${bytes} bytes`;
}

export function formatBps(bps: number): string {
  if (bps >= 1e9) return `${(bps / 1e9).toFixed(2)} Gbit/s`;
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(1)} Mbit/s`;
  return `${Math.round(bps)} bit/s`;
}

const LABEL_BY_SCORE = Object.fromEntries(
  Object.entries(RING_TYPE_PRIORITY).map(([type, p]) => [5 - p, type]),
) as Record<number, InterfaceType>;

/** A hop score in words: a measured speed, an unmeasured label, or an RDMA-only pair. */
export function formatScore(score: number): string {
  if (score === Number.POSITIVE_INFINITY) return 'no hop (single node)';
  if (score === Number.NEGATIVE_INFINITY) return 'no usable hop';
  const bps = scoreBandwidth(score);
  if (bps !== undefined) return `measured ${formatBps(bps)}`;
  if (score === 0) return 'RDMA only (no socket address)';
  return `unmeasured ${LABEL_BY_SCORE[score] ?? 'unknown'} link`;
}
