/**
 * Teardown that always runs: live labs are torn down on process exit and on SIGINT/SIGTERM/SIGHUP, and
 * `sweepStaleLabs` removes namespaces left by earlier runs that crashed (their owner pid is gone).
 */
import { LAB_PREFIX, parseLabNs } from './plan.js';
import { destroyNetnsSync, listNetnsSync, pidAlive } from './sh.js';

interface Tearable {
  teardownSync(): void;
}

const live = new Set<Tearable>();
let hooked = false;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function teardownAll(): void {
  for (const lab of [...live]) {
    try {
      lab.teardownSync();
    } catch {
      /* best effort: keep tearing down the others */
    }
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  teardownAll();
  // If nobody else handles this signal, keep its default meaning (terminate) now that the lab is gone.
  process.removeListener(signal, onSignal);
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

export function trackLab(lab: Tearable): void {
  live.add(lab);
  if (hooked) return;
  hooked = true;
  process.on('exit', teardownAll);
  for (const s of SIGNALS) process.on(s, onSignal);
}

export function untrackLab(lab: Tearable): void {
  live.delete(lab);
  if (live.size === 0 && hooked) {
    hooked = false;
    process.removeListener('exit', teardownAll);
    for (const s of SIGNALS) process.removeListener(s, onSignal);
  }
}

/**
 * Deletes namespaces of this lab naming scheme whose owner process no longer exists (an earlier run that
 * crashed or was SIGKILLed). Labs of live processes — other engineers' concurrent runs — are left alone.
 * Returns the namespaces removed.
 */
export function sweepStaleLabs(prefix = LAB_PREFIX): string[] {
  const removed: string[] = [];
  for (const ns of listNetnsSync()) {
    const parsed = parseLabNs(ns, prefix);
    if (!parsed || pidAlive(parsed.pid)) continue;
    destroyNetnsSync(ns);
    removed.push(ns);
  }
  return removed;
}
