/**
 * The CLI's side of the API's TLS, SSH style: the node's certificate is self-signed, so instead of a CA the CLI
 * pins its SHA-256 fingerprint per address. The expected fingerprint is `--fingerprint`, else
 * `TORUS_API_FINGERPRINT`, else the line for that address in `<data-dir>/known-api-hosts`; with none, the first
 * one seen is trusted and written there (trust on first use). A different certificate is refused before a single
 * byte of the request (the token) is written: the agent hands the socket to the request only after the check.
 * The file fails closed: only "no such file" means "nothing pinned yet"; a file the CLI cannot read (EACCES after a
 * run under sudo, a directory in its place) or a line it cannot parse refuses the connection, since treating it as
 * empty would trust any certificate and the next pin would rewrite the file without the other hosts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { TorusError, asTorusError } from '../protocols/errors.js';
import { writeFileAtomicSync } from '../native/durable-fs.js';

export const KNOWN_HOSTS_FILE = 'known-api-hosts';

const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

/** `aa:bb…` or `AABB…` (64 hex digits) as `AA:BB:…`, or undefined when it is not a SHA-256 fingerprint. */
export function normaliseFingerprint(text: string): string | undefined {
  const hex = text
    .trim()
    .replace(/^sha256[:=]/i, '')
    .replace(/:/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  const out = hex.match(/../g)!.join(':');
  return FINGERPRINT.test(out) ? out : undefined;
}

/** The known_hosts-style file: `host:port SHA256-FINGERPRINT` per line (`#` comments and blank lines allowed). */
export class KnownApiHosts {
  constructor(readonly file: string) {}

  static in(dataDir: string): KnownApiHosts {
    return new KnownApiHosts(join(dataDir, KNOWN_HOSTS_FILE));
  }

  /** The file's lines, each pin with its address and fingerprint; throws when the file cannot be read or parsed. */
  #lines(): { text: string; address?: string; fingerprint?: string }[] {
    const text = this.#text();
    if (text === '') return [];
    return text
      .replace(/\n$/, '')
      .split('\n')
      .map((line, i) => {
        const trimmed = line.trim();
        if (trimmed === '' || trimmed.startsWith('#')) return { text: line };
        const [address, fp, extra] = trimmed.split(/\s+/);
        const fingerprint = fp === undefined ? undefined : normaliseFingerprint(fp);
        if (!address || !fingerprint || extra !== undefined) throw this.#malformed(i + 1, trimmed);
        return { text: line, address, fingerprint };
      });
  }

  #text(): string {
    try {
      return readFileSync(this.file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return '';
      throw this.#unreadable(code ?? (error as Error).message);
    }
  }

  #unreadable(cause: string): TorusError {
    const what =
      cause === 'EISDIR'
        ? `${this.file} is a directory; remove it (the CLI writes the file there again on the next first use)`
        : cause === 'EACCES' || cause === 'EPERM'
          ? `This user may not read ${this.file} (a run under sudo may have written it); give it back with \`sudo chown $(id -u) ${this.file}\``
          : `Fix or remove ${this.file}`;
    return new TorusError(
      'TORUS_CONFIG_INVALID',
      `cannot read the pinned API certificates in ${this.file} (${cause}), so nothing was sent: ` +
        `without them any certificate would be trusted. ${what}, or pass --fingerprint (or TORUS_API_FINGERPRINT).`,
      { where: 'file', file: this.file, cause },
    );
  }

  #malformed(line: number, text: string): TorusError {
    return new TorusError(
      'TORUS_CONFIG_INVALID',
      `${this.file} line ${line} is not "host:port SHA256-FINGERPRINT" (${JSON.stringify(text.slice(0, 120))}), so nothing was sent: ` +
        'a damaged pin could let any certificate through. Fix or delete that line, or pass --fingerprint (or TORUS_API_FINGERPRINT).',
      { where: 'file', file: this.file, line },
    );
  }

  get(address: string): string | undefined {
    return this.#lines().find((l) => l.address === address)?.fingerprint;
  }

  /** Pins `fingerprint` for `address`, keeping every other line as it was; never writes a file it could not read. */
  add(address: string, fingerprint: string): void {
    const kept = this.#lines()
      .filter((l) => l.address !== address)
      .map((l) => l.text);
    writeFileAtomicSync(this.file, `${[...kept, `${address} ${fingerprint}`].join('\n')}\n`);
  }
}

export interface PinSource {
  /** What the CLI expects, and where that came from (named in the error), or undefined: trust on first use. */
  readonly expected: string | undefined;
  readonly from: string;
  readonly known: KnownApiHosts;
}

/** The address as pinned: `host:port` (IPv6 in brackets), the port defaulting to the API's. */
export function pinAddress(url: URL, defaultPort: number): string {
  return `${url.hostname}:${url.port || defaultPort}`;
}

export function mismatch(base: string, address: string, got: string, pin: PinSource): TorusError {
  return new TorusError(
    'TORUS_TLS_FINGERPRINT_MISMATCH',
    `the node at ${base} presents a certificate with sha256 ${got}, but ${pin.expected} is pinned for ${address} (${pin.from}). ` +
      "Nothing was sent. Someone may be intercepting the connection; if the node's certificate was replaced on purpose, " +
      `remove the line for ${address} from ${pin.known.file} or pass --fingerprint ${got}.`,
    { api: base, address, expected: pin.expected, got },
  );
}

/** An https agent that connects only to the pinned certificate (and pins the first one seen when none is). */
export function pinnedAgent(base: string, address: string, pin: PinSource): Agent {
  const agent = new Agent({ keepAlive: false });
  let expected = pin.expected;
  let from = pin.from;
  // createConnection with a callback: the request waits for it, so nothing is written before the check.
  (
    agent as unknown as {
      createConnection: (o: ConnectionOptions, cb: (e: Error | null, s?: Duplex) => void) => undefined;
    }
  ).createConnection = (options, cb) => {
    // The pin replaces CA verification (a self-signed certificate has none); SNI as the agent computed it.
    const socket: TLSSocket = connect({
      ...options,
      rejectUnauthorized: false,
      servername: options.servername || undefined,
    });
    const onError = (error: Error): void => cb(error);
    socket.once('error', onError);
    socket.once('secureConnect', () => {
      socket.off('error', onError);
      const got = socket.getPeerCertificate().fingerprint256;
      if (!got) {
        socket.destroy();
        cb(new TorusError('TORUS_API_UNREACHABLE', `${base}: the node sent no certificate`, { api: base }));
        return;
      }
      if (expected === undefined) {
        try {
          pin.known.add(address, got);
        } catch (error) {
          // Unreadable since the client was made, or unwritable: refuse rather than trust a pin that was not kept.
          socket.destroy();
          cb(asTorusError(error));
          return;
        }
        expected = got;
        from = `first seen, now in ${pin.known.file}`;
      } else if (got !== expected) {
        socket.destroy();
        cb(mismatch(base, address, got, { ...pin, expected, from }));
        return;
      }
      cb(null, socket);
    });
    return undefined;
  };
  return agent;
}
