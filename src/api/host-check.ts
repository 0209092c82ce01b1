/**
 * Host and Origin checks, run before any route (probe routes included). Against DNS rebinding a browser page on
 * `evil.example` that re-resolves to a LAN node still sends `Host: evil.example:PORT`, so the Host header must name
 * this node: one of its interface addresses, the address it is bound to, a localhost name, the machine's own host
 * name, or an operator-given `--api-allowed-hosts` entry. A request with a foreign Origin (another site's page) is
 * refused unless that origin was allowed explicitly; requests without Origin (CLI, curl, peers) pass.
 */
import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { TorusError } from '../protocols/errors.js';

const LOCAL_NAMES = ['localhost', '127.0.0.1', '::1'];
/** Interfaces can come and go while the node runs; an unknown Host re-reads them, at most this often. */
const REFRESH_MS = 1_000;

export interface HostPolicyOptions {
  /** The address the server is bound to (a wildcard adds nothing). */
  readonly bindHost: string;
  /** Extra host names or addresses (`--api-allowed-hosts`). */
  readonly allowedHosts?: readonly string[];
  /** Origins allowed to call the API from a browser besides the node's own (CORS). */
  readonly corsOrigins?: readonly string[];
  /** For tests: the machine's addresses (default os.networkInterfaces()). */
  readonly interfaceAddresses?: () => readonly string[];
}

export class HostPolicy {
  readonly #fixed: ReadonlySet<string>;
  readonly #cors: ReadonlySet<string>;
  readonly #interfaces: () => readonly string[];
  #addresses = new Set<string>();
  #readAt = 0;

  constructor(options: HostPolicyOptions) {
    const own = hostname().toLowerCase();
    const fixed = [...LOCAL_NAMES, own, `${own}.local`, ...(options.allowedHosts ?? []).map(normalise)];
    if (!['0.0.0.0', '::', ''].includes(options.bindHost)) fixed.push(normalise(options.bindHost));
    this.#fixed = new Set(fixed);
    this.#cors = new Set(options.corsOrigins ?? []);
    this.#interfaces = options.interfaceAddresses ?? machineAddresses;
  }

  /** Throws TORUS_HOST_REFUSED unless the Host header names this node. */
  checkHost(req: IncomingMessage): void {
    const name = hostOf(req.headers.host);
    if (name !== undefined && this.allows(name)) return;
    // Nothing about the node in the answer: the caller may be a rebinding page.
    throw new TorusError('TORUS_HOST_REFUSED', 'the Host header does not name this node (see --api-allowed-hosts)', {
      where: 'headers',
      path: 'host',
    });
  }

  allows(name: string): boolean {
    const host = normalise(name);
    if (this.#fixed.has(host) || this.#addresses.has(host)) return true;
    const now = Date.now();
    if (now - this.#readAt < REFRESH_MS) return false;
    this.#readAt = now;
    this.#addresses = new Set(this.#interfaces().map(normalise));
    return this.#addresses.has(host);
  }

  /**
   * CORS headers for the request: none for same-origin (the dashboard) or Origin-less requests, the allow
   * headers for an explicitly allowed origin; throws TORUS_ORIGIN_REFUSED for any other origin. Runs after
   * checkHost, so "same origin" means an origin naming this node.
   */
  corsHeaders(req: IncomingMessage): Record<string, string> {
    const origin = req.headers.origin;
    if (origin === undefined) return {};
    if (this.#cors.has(origin)) return { 'access-control-allow-origin': origin, vary: 'Origin' };
    let sameHost = false;
    try {
      sameHost = new URL(origin).host === (req.headers.host ?? '').toLowerCase();
    } catch {
      sameHost = false; // 'null' (sandboxed frames, file:) and garbage are foreign
    }
    if (sameHost) return {};
    throw new TorusError('TORUS_ORIGIN_REFUSED', 'cross-origin requests are only accepted from the dashboard origin', {
      where: 'headers',
      path: 'origin',
    });
  }
}

/**
 * The host name of a Host header value (`name`, `name:port`, `[v6]:port`, `[fe80::1%eth0]:port` as Node's client
 * sends a link-local address), or undefined if malformed. Parsed by hand: WHATWG URL refuses zone ids.
 */
export function hostOf(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 300) return undefined;
  const m = /^(?:\[([0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?)\]|([A-Za-z0-9_.-]+))(?::\d{1,5})?$/.exec(header);
  if (!m) return undefined;
  return (m[1] ?? m[2])!.toLowerCase();
}

/** Lowercase, without IPv6 brackets or zone id, without a trailing dot. */
function normalise(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '')
    .replace(/\.$/, '');
}

function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}
