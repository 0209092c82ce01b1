/**
 * The time no schedule can beat when some nodes hold chunks of an artifact and others need some of them, over the
 * measured links (docs/artifacts.md, "The bound"). Two kinds of terms, the largest wins:
 *   - in:  a receiver must take in every byte it needs and lacks, through all its ports at once;
 *   - out: the bytes that only the holders have (no receiver holds them) must leave the holders at least once,
 *          through their ports: each holder alone for what only it has, the holders together for all of them.
 * Relays do not lower either term (a relayed byte still enters its receiver and still left a holder once), so a
 * schedule in which every receiver also serves what it got can reach it; one chain cannot when several ports lead
 * into a node. A port's capacity is the fastest link measured through it: links are measured one pair at a time,
 * so they cannot tell a port's total, and links into one port share it (a LAN port; a point-to-point cable is a
 * port of its own). A node's sending port for a link is its interface whose address shares the longest prefix
 * with the address the link reached; a link no port can be matched to counts on its own (so the bound stays a
 * lower bound when the grouping is unknown).
 * The CPU bound (`cpuBoundSeconds`) is for hosts that share one machine's cores, as lab hosts do: every verified
 * byte costs CPU on the same cores.
 * Pure: no I/O, no clock.
 */

export interface BoundLink {
  readonly source: string;
  readonly sink: string;
  /** the address of the sink the link reached */
  readonly ip: string;
  /** bits per second, measured (links without it are left out) */
  readonly bandwidthBps?: number;
}

/** A node's chunks: the indices, or every chunk of the artifact. */
export type ChunkSet = readonly number[] | 'all';

export interface BoundInput {
  readonly links: readonly BoundLink[];
  /** per node, its interfaces as lists of addresses (ports); nodes without it: each link is its own port */
  readonly ports?: Readonly<Record<string, readonly (readonly string[])[]>>;
  /** bytes of each chunk of the artifact, by index */
  readonly chunkBytes: readonly number[];
  /** what each node holds at the start (only nodes with something) */
  readonly holds: Readonly<Record<string, ChunkSet>>;
  /** what each receiver must hold at the end (what it holds already is not counted) */
  readonly needs: Readonly<Record<string, ChunkSet>>;
}

export interface BoundTerm {
  /** the receiver (in) or holder (out); `holders` for the holders together */
  readonly node: string;
  readonly side: 'in' | 'out';
  readonly bytes: number;
  /** bits per second */
  readonly capacityBps: number;
  readonly seconds: number;
}

export interface DistributionBound {
  /** 0 when nothing has to move */
  readonly seconds: number;
  /** the term that sets it (absent when nothing has to move) */
  readonly limit?: BoundTerm;
  /** every term, largest first */
  readonly terms: readonly BoundTerm[];
  /** bytes every receiver takes in, summed: what the CPU bound counts */
  readonly receivedBytes: number;
  /** nodes with bytes to move and no measured link for them: the bound leaves them out */
  readonly unmeasured: readonly string[];
}

const expand = (set: ChunkSet | undefined, n: number): Set<number> => {
  if (set === undefined) return new Set();
  if (set === 'all') return new Set(Array.from({ length: n }, (_, i) => i));
  return new Set(set.filter((i) => Number.isInteger(i) && i >= 0 && i < n));
};

/** Bits the two textual addresses share from the start (IPv4 dotted or IPv6; different families share none). */
export function sharedPrefixBits(a: string, b: string): number {
  const bits = (ip: string): string | undefined => {
    if (ip.includes('.') && !ip.includes(':')) {
      const parts = ip.split('.').map(Number);
      if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
      return parts.map((p) => p.toString(2).padStart(8, '0')).join('');
    }
    const [head = '', tail = ''] = ip.split('%')[0]!.split('::');
    const h = head ? head.split(':') : [];
    const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
    const groups = ip.includes('::') ? [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t] : h;
    if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
    return `v6${groups.map((g) => Number.parseInt(g, 16).toString(2).padStart(16, '0')).join('')}`;
  };
  const x = bits(a),
    y = bits(b);
  if (x === undefined || y === undefined || x.startsWith('v6') !== y.startsWith('v6')) return 0;
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  return x.startsWith('v6') ? Math.max(0, i - 2) : i;
}

/** The sum over ports of the fastest link through each: `portOf` names a link's port, or undefined (its own). */
function capacity(links: readonly BoundLink[], portOf: (l: BoundLink) => string | undefined): number {
  const fastest = new Map<string, number>();
  links.forEach((l, i) => {
    const key = portOf(l) ?? `link ${i}`;
    fastest.set(key, Math.max(fastest.get(key) ?? 0, l.bandwidthBps!));
  });
  let sum = 0;
  for (const bps of fastest.values()) sum += bps;
  return sum;
}

export function distributionBound(input: BoundInput): DistributionBound {
  const n = input.chunkBytes.length;
  const bytesOf = (set: Iterable<number>): number => {
    let s = 0;
    for (const i of set) s += input.chunkBytes[i] ?? 0;
    return s;
  };
  const holds = new Map(Object.entries(input.holds).map(([node, set]) => [node, expand(set, n)]));
  const lacking = new Map<string, Set<number>>();
  for (const [node, set] of Object.entries(input.needs)) {
    const have = holds.get(node);
    const missing = [...expand(set, n)].filter((i) => !have?.has(i));
    if (missing.length > 0) lacking.set(node, new Set(missing));
  }
  const participants = new Set([...holds.keys(), ...lacking.keys()]);
  const measured = input.links.filter(
    (l) =>
      typeof l.bandwidthBps === 'number' &&
      Number.isFinite(l.bandwidthBps) &&
      l.bandwidthBps > 0 &&
      l.source !== l.sink &&
      participants.has(l.source) &&
      participants.has(l.sink),
  );
  const ports = input.ports ?? {};
  /** the port of `node` holding address `ip` (receiving side) */
  const ownPort = (node: string, ip: string): string | undefined => {
    const i = (Object.hasOwn(ports, node) ? ports[node]! : []).findIndex((addrs) => addrs.includes(ip));
    return i >= 0 ? `${node} port ${i}` : undefined;
  };
  /** the port of `node` a link to `ip` leaves from: the one sharing the longest prefix with it */
  const sendingPort = (node: string, ip: string): string | undefined => {
    let best = -1,
      bestBits = 0;
    (Object.hasOwn(ports, node) ? ports[node]! : []).forEach((addrs, i) => {
      for (const a of addrs) {
        const b = sharedPrefixBits(a, ip);
        if (b > bestBits) [best, bestBits] = [i, b];
      }
    });
    return best >= 0 ? `${node} port ${best}` : undefined;
  };

  const terms: BoundTerm[] = [];
  const unmeasured: string[] = [];
  const term = (node: string, side: 'in' | 'out', bytes: number, capacityBps: number): void => {
    if (bytes <= 0) return;
    if (capacityBps <= 0) {
      if (!unmeasured.includes(node)) unmeasured.push(node);
      return;
    }
    terms.push({ node, side, bytes, capacityBps, seconds: (bytes * 8) / capacityBps });
  };

  let receivedBytes = 0;
  for (const [node, missing] of lacking) {
    const bytes = bytesOf(missing);
    receivedBytes += bytes;
    const inbound = measured.filter((l) => l.sink === node && (holds.has(l.source) || lacking.has(l.source)));
    term(
      node,
      'in',
      bytes,
      capacity(inbound, (l) => ownPort(node, l.ip)),
    );
  }

  // Chunks some receiver lacks that no receiver holds: they leave the holders at least once.
  const fromHolders = new Set<number>();
  for (const missing of lacking.values())
    for (const i of missing) if (![...lacking.keys()].some((r) => holds.get(r)?.has(i))) fromHolders.add(i);
  const holders = [...holds.keys()].filter((h) => !lacking.has(h));
  const outOf = (h: string): number =>
    capacity(
      measured.filter((l) => l.source === h && l.sink !== h),
      (l) => sendingPort(h, l.ip),
    );
  for (const h of holders) {
    const only = [...fromHolders].filter((i) => holders.every((o) => o === h || !holds.get(o)!.has(i)));
    term(h, 'out', bytesOf(only), outOf(h));
  }
  if (holders.length > 1)
    term(
      'holders',
      'out',
      bytesOf(fromHolders),
      holders.reduce((s, h) => s + outOf(h), 0),
    );

  terms.sort((a, b) => b.seconds - a.seconds || (a.node < b.node ? -1 : 1));
  const limit = terms[0];
  return { seconds: limit?.seconds ?? 0, ...(limit ? { limit } : {}), terms, receivedBytes, unmeasured };
}

/**
 * The CPU bound for hosts sharing one machine: every byte received is verified (SHA-256) and written on the same
 * `cores`, at `cpuSecondsPerByte` each (measured on that machine).
 */
export function cpuBoundSeconds(receivedBytes: number, cpuSecondsPerByte: number, cores: number): number {
  if (!(cores > 0) || !(cpuSecondsPerByte >= 0)) return 0;
  return (receivedBytes * cpuSecondsPerByte) / cores;
}

/** One line for people: `2.41 s (in: n-b takes 512 MiB at 1.70 Gbit/s)`. */
export function describeLimit(b: DistributionBound, name: (node: string) => string = (x) => x): string {
  if (!b.limit) return 'nothing to move';
  const t = b.limit;
  const who =
    t.node === 'holders' ? 'the holders together send' : `${name(t.node)} ${t.side === 'in' ? 'takes' : 'sends'}`;
  const mib = (t.bytes / 2 ** 20).toFixed(t.bytes < 10 * 2 ** 20 ? 1 : 0);
  return `${b.seconds.toFixed(2)} s (${t.side}: ${who} ${mib} MiB at ${(t.capacityBps / 1e9).toFixed(2)} Gbit/s)`;
}
