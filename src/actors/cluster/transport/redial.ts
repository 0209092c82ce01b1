/**
 * When to dial again a peer that refused us (wrong or missing secret, another cluster, another protocol version),
 * pure. Such a peer will refuse again until someone changes its configuration or ours, so instead of every 10 s
 * forever the delay doubles per refusal up to a cap. What can have changed is visible: the peer restarted (a new
 * incarnation in its mDNS advert or in the hello of a connection it makes to us), so that resets the backoff.
 */
export interface RedialPolicy {
  /** Delay after the first refusal. */
  readonly baseMs: number;
  /** Longest delay. */
  readonly capMs: number;
}

export const DEFAULT_REDIAL: RedialPolicy = { baseMs: 10_000, capMs: 5 * 60_000 };

/** What a dial target remembers about refusals. */
export interface Refusals {
  /** Refusals in a row (0 = none since the last reset or join). */
  readonly count: number;
  /** The peer's incarnation when it refused us, if known. */
  readonly incarnation?: number;
}

export const NO_REFUSALS: Refusals = { count: 0 };

/** Delay before the next dial after the `count`-th refusal in a row (count >= 1): base × 2^(count-1), capped. */
export function refusedDelayMs(count: number, policy: RedialPolicy = DEFAULT_REDIAL): number {
  if (count <= 0) return 0;
  return Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(count - 1, 30));
}

/** Records one more refusal at `now`; returns the new record and when to dial next. */
export function refused(
  prev: Refusals,
  now: number,
  incarnation: number | undefined,
  policy: RedialPolicy = DEFAULT_REDIAL,
): { refusals: Refusals; nextAt: number } {
  // A refusal from a newer process than the one that refused before counts as the first again.
  const restarted = incarnation !== undefined && prev.incarnation !== undefined && incarnation !== prev.incarnation;
  const count = restarted ? 1 : prev.count + 1;
  const refusals: Refusals =
    incarnation !== undefined
      ? { count, incarnation }
      : prev.incarnation !== undefined
        ? { count, incarnation: prev.incarnation }
        : { count };
  return { refusals, nextAt: now + refusedDelayMs(count, policy) };
}

/**
 * Whether news about the peer (an advert or an inbound hello carrying `incarnation`) should reset the backoff:
 * only when it refused us before and the incarnation differs from the refusing one (it restarted, perhaps
 * reconfigured). The same process announcing or dialing again changes nothing: resetting then would make two
 * misconfigured peers re-dial each other in a loop.
 */
export function shouldReset(prev: Refusals, incarnation: number | undefined): boolean {
  return (
    prev.count > 0 && incarnation !== undefined && prev.incarnation !== undefined && incarnation !== prev.incarnation
  );
}
