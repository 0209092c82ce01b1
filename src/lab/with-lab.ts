/** Test helper: build a lab for one tap test and tear it down in `t.teardown`, or skip when no lab is possible. */
import { Lab } from './lab.js';
import type { LabOptions } from './plan.js';

/** The part of a tap Test this helper uses (kept structural so src/ does not import tap). */
export interface LabTestContext {
  teardown(fn: () => unknown): void;
  /** tap: `t.plan(0, reason)` marks the current test skipped with that reason. */
  plan(n: number, comment?: string): void;
}

export async function withLab<T>(
  t: LabTestContext,
  options: LabOptions,
  fn: (lab: Lab) => Promise<T> | T,
): Promise<T | undefined> {
  const why = Lab.unavailableReason();
  if (why) {
    t.plan(0, `skipped: ${why}`);
    return undefined;
  }
  const lab = await Lab.create(options);
  t.teardown(() => lab.teardown());
  return fn(lab);
}
