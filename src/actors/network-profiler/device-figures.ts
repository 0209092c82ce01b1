/**
 * This node's device figures for its profile: what was declared by flags wins (an accelerator torus cannot
 * measure from Node), the CPU measurement (src/native/device-speed.ts) fills the rest.
 */
import type { DeviceInfo } from '../../protocols/events.js';
import type { DeviceSpeed } from '../../native/device-speed.js';

export interface DeclaredDevice {
  readonly gflops?: number;
  readonly memoryBandwidthGBps?: number;
}

export function deviceInfo(
  declared: DeclaredDevice | undefined,
  measured: DeviceSpeed | undefined,
  measuredAt: number | undefined,
): DeviceInfo | undefined {
  const out: { -readonly [K in keyof DeviceInfo]: DeviceInfo[K] } = {};
  const memory = declared?.memoryBandwidthGBps ?? positive(measured?.memoryBandwidthGBps);
  if (memory !== undefined) {
    out.memoryBandwidthGBps = memory;
    out.memoryBandwidthSource = declared?.memoryBandwidthGBps !== undefined ? 'declared' : 'measured';
  }
  const gflops = declared?.gflops ?? positive(measured?.gflops);
  if (gflops !== undefined) {
    out.gflops = gflops;
    out.gflopsSource = declared?.gflops !== undefined ? 'declared' : 'measured';
  }
  const anyMeasured = out.memoryBandwidthSource === 'measured' || out.gflopsSource === 'measured';
  if (anyMeasured && measuredAt !== undefined) out.measuredAt = measuredAt;
  return Object.keys(out).length > 0 ? out : undefined;
}

const positive = (x: number | undefined): number | undefined =>
  x !== undefined && Number.isFinite(x) && x > 0 ? x : undefined;
