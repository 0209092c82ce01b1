/** What a runner does at each lifecycle step; one implementation per workload kind (exec, ring). */
import type { RunnerStartConfig } from '../../../protocols/runner.js';

export interface RunnerWorkload {
  /** Join the group (ring: connect to both neighbours). Bounded by the signal. */
  connect(signal: AbortSignal): Promise<void>;
  /** Allocate / load; `report(layersLoaded)` for progress over `totalLayers`. */
  load(report: (layersLoaded: number) => void): Promise<void>;
  warmup(signal: AbortSignal): Promise<void>;
  /** One task; resolves with a plain-data result, rejects on failure; must stop promptly on abort. */
  run(op: string, params: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<unknown>;
  /** Release everything (children, sockets). Idempotent. */
  close(): Promise<void>;
  /** Why the workload can no longer run tasks (a ring whose communicator broke), or undefined while it can. */
  broken?(): string | undefined;
}

export type WorkloadFactory = (config: RunnerStartConfig, diagnostic: (message: string) => void) => RunnerWorkload;

export function totalLayers(config: RunnerStartConfig): number {
  return config.layerEnd - config.layerStart;
}

/** Rejects with the signal's reason once aborted (for racing work against cancellation). */
export function abortPromise(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
