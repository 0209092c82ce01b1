/** Pool task `device.measure`: the device-speed measurement off the caller's thread (src/runtime/cpu-tasks.ts). */
import { measureDeviceSpeed, type DeviceSpeed, type MeasureOptions } from './device-speed.js';

export default function measureDevice(input: unknown): DeviceSpeed {
  const o = (input ?? {}) as MeasureOptions;
  const num = (x: unknown): number | undefined =>
    typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : undefined;
  const options: { -readonly [K in keyof MeasureOptions]: MeasureOptions[K] } = {};
  const buffer = num(o.bufferBytes),
    memoryBudget = num(o.memoryBudgetMs),
    computeBudget = num(o.computeBudgetMs);
  // Bounded whatever the caller asks: at most 256 MiB and 1 s per half.
  if (buffer !== undefined) options.bufferBytes = Math.min(buffer, 256 * 2 ** 20);
  if (memoryBudget !== undefined) options.memoryBudgetMs = Math.min(memoryBudget, 1000);
  if (computeBudget !== undefined) options.computeBudgetMs = Math.min(computeBudget, 1000);
  return measureDeviceSpeed(options);
}
