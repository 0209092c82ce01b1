/**
 * Which mDNS adverts may become dial targets. mDNS is a shared, unauthenticated medium: anyone on the LAN can send
 * thousands of adverts, with any source address. So an advert is dialled only when the packet came from an
 * address the advert itself lists (its A records), adverts are taken at a bounded rate (a token bucket; the
 * excess is dropped and counted, a real node announces again), and the connection manager caps mDNS targets.
 */
export const ADVERTS_PER_SECOND = 20;
export const ADVERT_BURST = 40;

export type AdvertVerdict = 'accept' | 'rate-limited' | 'source-mismatch';

export class AdvertGate {
  #tokens = ADVERT_BURST;
  #at: number;
  readonly #now: () => number;
  readonly dropped = { 'rate-limited': 0, 'source-mismatch': 0 };

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#at = now();
  }

  /** `source`: the packet's source address; `advertised`: the A records the advert carried. */
  check(source: string, advertised: readonly string[]): AdvertVerdict {
    if (!advertised.includes(source)) return this.#drop('source-mismatch');
    const now = this.#now();
    this.#tokens = Math.min(ADVERT_BURST, this.#tokens + ((now - this.#at) / 1000) * ADVERTS_PER_SECOND);
    this.#at = now;
    if (this.#tokens < 1) return this.#drop('rate-limited');
    this.#tokens -= 1;
    return 'accept';
  }

  #drop(why: Exclude<AdvertVerdict, 'accept'>): AdvertVerdict {
    this.dropped[why]++;
    return why;
  }
}
