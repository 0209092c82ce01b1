/**
 * mDNS discovery: announces this node ~1 Hz until settled, then backs off (doubling, up to 30 s); queries on the
 * same schedule; answers queries for the service. Every advert heard (ours or not) goes to `onAdvert` with the
 * sender's address; the caller decides whether to dial or list it. multicast-dns keeps the process alive until
 * destroyed, so `stop()` must be called; send failures (no multicast route) are logged, not thrown.
 */
import makeMdns from 'multicast-dns';
import type { Logger } from '../../../runtime/log.js';
import { decodeTxt, encodeTxt, SERVICE, type Advert } from '../../../protocols/cluster-discovery.js';

export interface DiscoveryOptions {
  readonly advert: Advert;
  readonly addresses: readonly string[];
  readonly log: Logger;
  /** `host`: the packet's source address; `advertised`: the A records of the advert's host in the same packet. */
  readonly onAdvert: (advert: Advert, host: string, advertised: readonly string[]) => void;
  /** Announcements at the fast rate before backing off. */
  readonly settleAnnouncements?: number;
  readonly fastIntervalMs?: number;
  readonly maxIntervalMs?: number;
  readonly interfaceIp?: string;
}

export class MdnsDiscovery {
  readonly #o: DiscoveryOptions;
  #mdns: makeMdns.MulticastDNS | null = null;
  #timer: NodeJS.Timeout | null = null;
  #sent = 0;
  #interval: number;
  #errors = 0;

  constructor(options: DiscoveryOptions) {
    this.#o = options;
    this.#interval = options.fastIntervalMs ?? 1000;
  }

  start(): void {
    const mdns = makeMdns(this.#o.interfaceIp ? { interface: this.#o.interfaceIp } : {});
    this.#mdns = mdns;
    mdns.on('error', (err: Error) => this.#onError(err));
    mdns.on('warning', (err: Error) => this.#onError(err));
    mdns.on('query', (q) => {
      const instance = this.#instance();
      if (q.questions.some((x) => x.name === SERVICE || x.name === instance)) this.#respond();
    });
    mdns.on('response', (packet, rinfo) => {
      const records = [...packet.answers, ...(packet.additionals ?? [])].slice(0, 64);
      for (const rr of records) {
        if (rr.type !== 'TXT' || !rr.name.endsWith(`.${SERVICE}`)) continue;
        const advert = decodeTxt(rr.data);
        if (!advert || advert.nodeId === this.#o.advert.nodeId) continue;
        const host = `${advert.nodeId}.local`;
        const advertised = records.flatMap((a) =>
          a.type === 'A' && a.name === host && typeof a.data === 'string' ? [a.data] : [],
        );
        this.#o.onAdvert(advert, rinfo.address, advertised);
      }
    });
    this.#cycle();
  }

  /** Back to the fast rate (e.g. after the membership changed). */
  unsettle(): void {
    this.#sent = 0;
    this.#interval = this.#o.fastIntervalMs ?? 1000;
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#cycle();
    }
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const mdns = this.#mdns;
    this.#mdns = null;
    try {
      mdns?.destroy();
    } catch {
      // already closed
    }
  }

  #instance(): string {
    return `${this.#o.advert.nodeId}.${SERVICE}`;
  }

  #cycle(): void {
    if (!this.#mdns) return;
    this.#respond();
    this.#send(() => this.#mdns?.query({ questions: [{ name: SERVICE, type: 'PTR' }] }));
    this.#sent++;
    if (this.#sent >= (this.#o.settleAnnouncements ?? 5))
      this.#interval = Math.min(this.#interval * 2, this.#o.maxIntervalMs ?? 30_000);
    this.#timer = setTimeout(() => this.#cycle(), this.#interval);
    this.#timer.unref();
  }

  #respond(): void {
    const instance = this.#instance();
    const host = `${this.#o.advert.nodeId}.local`;
    const answers = [
      { name: SERVICE, type: 'PTR' as const, ttl: 120, data: instance },
      {
        name: instance,
        type: 'SRV' as const,
        ttl: 120,
        data: { port: this.#o.advert.port, target: host, priority: 0, weight: 0 },
      },
      { name: instance, type: 'TXT' as const, ttl: 120, data: encodeTxt(this.#o.advert) },
      ...this.#o.addresses.map((ip) => ({ name: host, type: 'A' as const, ttl: 120, data: ip })),
    ];
    this.#send(() => this.#mdns?.respond({ answers }));
  }

  #send(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#onError(err as Error);
    }
  }

  #onError(err: Error): void {
    // Without a multicast route every send fails: say so once in a while, keep going (static peers may work).
    if (this.#errors++ % 30 === 0)
      this.#o.log.warn('mDNS send/receive failed', { err: err.message, count: this.#errors });
  }
}
