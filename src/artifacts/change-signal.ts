/**
 * A version counter that waiters can sleep on: `bump` when something a waiter may care about changed (a transfer
 * ended, a shard directory got built), `changedSince(v, ms)` resolves true once the version is past `v`, false
 * after `ms`. Read `version` before looking at the thing, then wait past it: a change made while looking is never
 * missed. A waiter that times out leaves nothing behind.
 */
export class ChangeSignal {
  #version = 0;
  readonly #waiters = new Set<() => void>();

  get version(): number {
    return this.#version;
  }

  bump(): void {
    this.#version++;
    for (const wake of [...this.#waiters]) wake();
  }

  changedSince(version: number, ms: number): Promise<boolean> {
    return anyChanged([[this, version]], ms);
  }

  /** @internal for anyChanged */
  listen(wake: () => void): () => void {
    this.#waiters.add(wake);
    return () => this.#waiters.delete(wake);
  }
}

/** True as soon as any of the signals is past its version, false after `ms`; every waiter removed either way. */
export function anyChanged(seen: readonly (readonly [ChangeSignal, number])[], ms: number): Promise<boolean> {
  const moved = (): boolean => seen.some(([s, v]) => s.version !== v);
  if (moved()) return Promise.resolve(true);
  if (ms <= 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const wake = (): void => {
      clearTimeout(timer);
      for (const off of offs) off();
      resolve(moved());
    };
    const timer = setTimeout(wake, ms);
    const offs = seen.map(([s]) => s.listen(wake));
  });
}
