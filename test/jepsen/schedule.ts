/**
 * A seeded fault schedule for the Jepsen-style checker: the same seed gives the same faults at the same times, so
 * a failing run can be replayed (`TORUS_JEPSEN_SEED=...`). Faults: isolate the leader, split the hosts 2|3, flap one
 * host's link, kill -9 a random node (restarted a few seconds later). Every fault is healed before the next one.
 */
export type Fault =
  | { readonly kind: 'isolate-leader'; readonly holdMs: number }
  | { readonly kind: 'split'; readonly minority: readonly number[]; readonly holdMs: number }
  | { readonly kind: 'flap'; readonly host: number; readonly times: number; readonly periodMs: number }
  | { readonly kind: 'kill'; readonly host: number; readonly downMs: number };

export interface Step {
  readonly at: number;
  readonly fault: Fault;
}

/** mulberry32: small, fast, good enough for schedules. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` faults over `hosts` hosts, one every `gapMs` (plus jitter), each kind at least once when count >= 4. */
export function faultSchedule(seed: number, hosts: number, count: number, gapMs: number): Step[] {
  const r = rng(seed);
  const pick = (n: number) => Math.floor(r() * n);
  const kinds: Fault['kind'][] = ['isolate-leader', 'split', 'flap', 'kill'];
  const order = [...kinds].sort(() => r() - 0.5);
  const steps: Step[] = [];
  let at = 2000;
  for (let i = 0; i < count; i++) {
    const kind = i < order.length ? order[i]! : kinds[pick(kinds.length)]!;
    let fault: Fault;
    switch (kind) {
      case 'isolate-leader':
        fault = { kind, holdMs: 4000 + pick(3000) };
        break;
      case 'split': {
        const shuffled = Array.from({ length: hosts }, (_, h) => h).sort(() => r() - 0.5);
        fault = { kind, minority: shuffled.slice(0, Math.floor(hosts / 2)).sort(), holdMs: 4000 + pick(3000) };
        break;
      }
      case 'flap':
        fault = { kind, host: pick(hosts), times: 3 + pick(3), periodMs: 500 + pick(700) };
        break;
      case 'kill':
        fault = { kind, host: pick(hosts), downMs: 1000 + pick(3000) };
        break;
    }
    steps.push({ at, fault });
    at += gapMs + pick(1000);
  }
  return steps;
}
