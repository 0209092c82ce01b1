/**
 * GET of chunk bodies over keep-alive HTTP/1.1 connections, each body read by the kernel straight into the buffer
 * that is then verified and written. The receive path is CPU-bound (profiled in the lab at 1 Gbit/s): node:http
 * hands a body over in pieces of at most 64 KiB, each copied by its parser into a fresh buffer (malloc, page
 * faults), pushed through a stream and copied again into the chunk; that was ~2 ms of CPU per MiB of the ~6. Here
 * the socket's `onread` target is the unread rest of the chunk buffer, so one read takes whatever the socket holds
 * (often hundreds of KiB) with no copy and no stream.
 * Only what the peer routes answer is understood: a status line, headers, a `content-length` body (node:http sets
 * it on every answer of peer-server.ts). Anything else is refused and the connection closed; a hostile peer can
 * make a request fail, nothing more. The other peer requests (manifest, have, fetch) stay on node:http.
 * A run of chunks (peer-runs.ts) is one body read piece by piece: each chunk into a buffer of its own, handed to
 * `onPiece` as soon as it is whole, so it is verified while the rest streams in, and a cut stream loses only the
 * chunk it cut.
 */
import { connect, type Socket } from 'node:net';
import { errorFromJson, TorusError } from '../protocols/errors.js';

/** Status line and headers larger than this are refused (the peer routes send ~200 bytes). */
const HEAD_MAX = 16 * 1024;
/** Error answers are small JSON. */
const MAX_ERROR_BODY = 64 * 1024;
/**
 * Idle connections are dropped before node:http's server closes them (keepAliveTimeout 5 s), so a request is rarely
 * sent on a connection the server is closing; when it is (closed before any answer byte), it is sent again once.
 */
const IDLE_MS = 4000;
const IDLE_PER_ORIGIN = 16;

export interface ChunkGet {
  readonly host: string;
  readonly port: number;
  /** path and query */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly timeoutMs: number;
  readonly maxBody: number;
  /** a buffer of exactly `length` bytes for the body (from a pool) */
  readonly bodyBuffer: (length: number) => Buffer;
}

/** A body made of pieces of known lengths (a run of chunks): each is its own buffer, handed over when whole. */
export interface RunGet extends Omit<ChunkGet, 'maxBody'> {
  readonly pieces: readonly number[];
  /** piece `k` arrived whole, in order; it is the caller's from now on */
  readonly onPiece: (k: number, body: Buffer) => void;
}

interface Pieces {
  readonly lengths: readonly number[];
  readonly total: number;
  readonly onPiece: (k: number, body: Buffer) => void;
  /** the piece being read */
  k: number;
}

type Outcome = { ok: true; body: Buffer } | { ok: false; error: TorusError; retry: boolean };

/** One connection; one request at a time. */
class Connection {
  readonly socket: Socket;
  readonly #head = Buffer.allocUnsafeSlow(HEAD_MAX);
  #headLength = 0;
  /** the body being read: its buffer and how much of it arrived */
  #body: Buffer | undefined;
  #at = 0;
  #status = 0;
  #closeAfter = false;
  #done: ((o: Outcome) => void) | undefined;
  #answered = false;
  #maxBody = 0;
  #bodyBuffer: (length: number) => Buffer = (l) => Buffer.allocUnsafe(l);
  #pieces: Pieces | undefined;
  closed = false;
  idleTimer: NodeJS.Timeout | undefined;

  constructor(
    host: string,
    port: number,
    readonly onFree: (c: Connection) => void,
  ) {
    this.socket = connect({
      host,
      port,
      noDelay: true,
      // The read target: the unread rest of the body, else the head buffer's free part (called after every read).
      onread: {
        buffer: () => (this.#body ? this.#body.subarray(this.#at) : this.#head.subarray(this.#headLength)),
        callback: (n) => {
          this.#onRead(n);
          return true;
        },
      },
    });
    let cause = 'connection closed';
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      cause = error.code ?? error.message;
    }); // 'close' follows
    this.socket.once('close', () => {
      this.closed = true;
      clearTimeout(this.idleTimer);
      this.#settle({ ok: false, error: new TorusError('TORUS_API_UNREACHABLE', cause), retry: !this.#answered });
    });
  }

  /** Sends one request; `done` gets its outcome. */
  send(head: string, done: (o: Outcome) => void): void {
    this.#done = done;
    this.#answered = false;
    this.#headLength = 0;
    this.#body = undefined;
    this.#at = 0;
    this.socket.write(head, 'latin1');
  }

  /** The next request's body limit and buffer source. */
  configure(maxBody: number, bodyBuffer: (length: number) => Buffer, pieces?: Pieces): void {
    this.#maxBody = maxBody;
    this.#bodyBuffer = bodyBuffer;
    this.#pieces = pieces;
  }

  fail(error: TorusError): void {
    this.#settle({ ok: false, error, retry: false });
    this.socket.destroy();
  }

  #settle(o: Outcome): void {
    const done = this.#done;
    this.#done = undefined;
    done?.(o);
  }

  #protocolError(why: string): void {
    this.fail(new TorusError('TORUS_API_UNREACHABLE', `bad answer: ${why}`));
  }

  #onRead(n: number): void {
    if (!this.#done) {
      this.#protocolError('bytes while no request was sent');
      return;
    }
    this.#answered = true;
    if (this.#body) {
      this.#at += n;
      this.#maybeComplete();
      return;
    }
    this.#headLength += n;
    const end = this.#head.subarray(0, this.#headLength).indexOf('\r\n\r\n', 0, 'latin1');
    if (end < 0) {
      if (this.#headLength >= HEAD_MAX) this.#protocolError('headers too large');
      return;
    }
    const lines = this.#head.toString('latin1', 0, end).split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
    if (!status) {
      this.#protocolError('no HTTP/1.1 status line');
      return;
    }
    this.#status = Number(status[1]);
    let length: number | undefined;
    this.#closeAfter = lines[0]!.startsWith('HTTP/1.0');
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) {
        this.#protocolError('malformed header');
        return;
      }
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') {
        if (!/^\d{1,12}$/.test(value) || (length !== undefined && length !== Number(value))) {
          this.#protocolError(`bad content-length ${value}`);
          return;
        }
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        this.#protocolError('transfer-encoding is not expected');
        return;
      } else if (name === 'connection' && value.toLowerCase() === 'close') this.#closeAfter = true;
    }
    if (length === undefined) {
      this.#protocolError('no content-length');
      return;
    }
    const ok = this.#status >= 200 && this.#status < 300;
    const pieces = ok ? this.#pieces : undefined;
    if (pieces && length !== pieces.total) {
      this.#protocolError(`content-length ${length} is not the run's ${pieces.total} bytes`);
      return;
    }
    if (!pieces && length > (ok ? this.#maxBody : MAX_ERROR_BODY)) {
      this.#protocolError(`content-length ${length} too large`);
      return;
    }
    if (!ok) this.#pieces = undefined;
    // Body bytes that arrived with the head: at most a read's worth, copied once.
    const extra = this.#headLength - (end + 4);
    if (extra > length) {
      this.#protocolError('more bytes than announced');
      return;
    }
    this.#body = !ok ? Buffer.allocUnsafe(length) : this.#bodyBuffer(pieces ? pieces.lengths[0]! : length);
    this.#at = 0;
    for (let from = end + 4; ; ) {
      const n = this.#head.copy(this.#body, this.#at, from, this.#headLength);
      this.#at += n;
      from += n;
      if (from >= this.#headLength || !this.#nextPiece()) break;
    }
    this.#maybeComplete();
  }

  /** The current piece of a run is whole and not the last: hands it over, reads into the next. */
  #nextPiece(): boolean {
    const p = this.#pieces;
    const body = this.#body!;
    if (!p || this.#at < body.length || p.k + 1 >= p.lengths.length) return false;
    p.onPiece(p.k, body);
    p.k++;
    this.#body = this.#bodyBuffer(p.lengths[p.k]!);
    this.#at = 0;
    return true;
  }

  #maybeComplete(): void {
    while (this.#nextPiece());
    const body = this.#body!;
    if (this.#at < body.length) return;
    const p = this.#pieces;
    this.#pieces = undefined;
    if (p) p.onPiece(p.k, body);
    const status = this.#status;
    this.#body = undefined;
    this.#headLength = 0;
    const keep = !this.#closeAfter;
    if (status >= 200 && status < 300) this.#settle({ ok: true, body });
    else this.#settle({ ok: false, error: errorOf(body, status), retry: false });
    if (keep) this.onFree(this);
    else this.socket.destroy();
  }
}

function errorOf(body: Buffer, status: number): TorusError {
  try {
    const error = (JSON.parse(body.toString('utf8')) as { error?: unknown }).error;
    if (error) return errorFromJson(error);
  } catch {
    /* not JSON */
  }
  return new TorusError('TORUS_API_UNREACHABLE', `HTTP ${status}`, { status });
}

export class ChunkClient {
  readonly #idle = new Map<string, Connection[]>();
  /** every open connection, idle or busy: `close` ends them all (a busy one fails its request) */
  readonly #open = new Set<Connection>();
  #closed = false;

  close(): void {
    this.#closed = true;
    for (const c of this.#open) c.fail(new TorusError('TORUS_API_UNREACHABLE', 'the client closed'));
    this.#open.clear();
    this.#idle.clear();
  }

  /** The body of a 2xx answer; rejects with the peer's TorusError, or TORUS_API_UNREACHABLE. */
  async get(o: ChunkGet): Promise<Buffer> {
    return this.#get(o);
  }

  /**
   * A run: the body is split into `pieces`, each handed to `onPiece` as it arrives whole. Resolves once all are;
   * rejects like `get` (after the pieces that arrived whole were handed over).
   */
  async getRun(o: RunGet): Promise<void> {
    if (o.pieces.length === 0 || o.pieces.some((l) => !Number.isSafeInteger(l) || l <= 0))
      throw new TorusError('TORUS_INTERNAL', 'a run needs pieces of positive lengths');
    const total = o.pieces.reduce((a, b) => a + b, 0);
    await this.#get({ ...o, maxBody: total }, o);
  }

  async #get(o: ChunkGet, run?: RunGet): Promise<Buffer> {
    const origin = `${o.host}:${o.port}`;
    const head = `GET ${o.path} HTTP/1.1\r\nhost: ${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}\r\n${Object.entries(
      o.headers,
    )
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    const deadline = Date.now() + o.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (this.#closed)
        throw new TorusError('TORUS_API_UNREACHABLE', `http://${origin}: the client closed`, {
          base: `http://${origin}`,
        });
      const idle = this.#takeIdle(origin);
      const conn = idle ?? this.#connect(o.host, o.port, origin);
      conn.configure(
        o.maxBody,
        o.bodyBuffer,
        run ? { lengths: run.pieces, total: o.maxBody, onPiece: run.onPiece, k: 0 } : undefined,
      );
      const outcome = await new Promise<Outcome>((resolve) => {
        const timer = setTimeout(
          () => conn.fail(new TorusError('TORUS_API_UNREACHABLE', `no answer in ${o.timeoutMs} ms`)),
          Math.max(1, deadline - Date.now()),
        );
        conn.send(head, (x) => {
          clearTimeout(timer);
          resolve(x);
        });
      });
      if (outcome.ok) return outcome.body;
      // A kept-alive connection closed by the server before it answered: send the (idempotent) GET again, once.
      if (outcome.retry && idle !== undefined && attempt === 0 && Date.now() < deadline) continue;
      const e = outcome.error;
      throw e.code === 'TORUS_API_UNREACHABLE'
        ? new TorusError('TORUS_API_UNREACHABLE', `http://${origin}${o.path}: ${e.message}`, {
            ...e.details,
            base: `http://${origin}`,
          })
        : e;
    }
  }

  #connect(host: string, port: number, origin: string): Connection {
    const c = new Connection(host, port, (free) => this.#putIdle(origin, free));
    this.#open.add(c);
    c.socket.once('close', () => this.#open.delete(c));
    return c;
  }

  #takeIdle(origin: string): Connection | undefined {
    const list = this.#idle.get(origin);
    for (let c = list?.pop(); c; c = list?.pop()) {
      clearTimeout(c.idleTimer);
      if (!c.closed) return c;
    }
    return undefined;
  }

  #putIdle(origin: string, c: Connection): void {
    const list = this.#idle.get(origin) ?? [];
    if (this.#closed || list.length >= IDLE_PER_ORIGIN) {
      c.socket.destroy();
      return;
    }
    list.push(c);
    this.#idle.set(origin, list);
    c.idleTimer = setTimeout(() => {
      const i = list.indexOf(c);
      if (i >= 0) list.splice(i, 1);
      c.socket.destroy();
    }, IDLE_MS);
    c.idleTimer.unref();
  }
}
