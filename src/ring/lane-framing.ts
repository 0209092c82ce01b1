/**
 * The op header each lane of a collective starts with, per connection: numbered in call order, held back so a
 * small first payload leaves in the same write, and checked on the reading side (both ranks must run the same
 * collective, else it fails naming the peer and both ops).
 */
import { TorusError } from '../protocols/errors.js';
import { decodeRingFrame, encodeRingFrame } from '../protocols/ring-frames.js';
import type { LaneHeader } from './context.js';
import type { OpRun } from './op-run.js';
import type { Conn } from './peer-links.js';

const SMALL_WRITE = 16 * 1024;

export class LaneFraming {
  readonly #headers = new Map<Conn, Uint8Array>();
  readonly #seqOut = new WeakMap<Conn, number>();
  readonly #seqIn = new WeakMap<Conn, number>();

  constructor(
    private readonly rank: number,
    /** names a peer rank in an error */
    private readonly describe: (peer: number) => string,
  ) {}

  openWrite(conn: Conn, header: LaneHeader): void {
    const seq = this.#seqOut.get(conn) ?? 0;
    this.#seqOut.set(conn, seq + 1);
    // Held back so a small first payload leaves in the same write (one segment, one syscall).
    this.#headers.set(conn, encodeRingFrame({ kind: 'op', seq, ...header }));
  }

  write(run: OpRun, conn: Conn, bytes: Uint8Array): void {
    const header = this.#headers.get(conn);
    if (header) {
      this.#headers.delete(conn);
      if (bytes.length <= SMALL_WRITE) {
        const joined = new Uint8Array(header.length + bytes.length);
        joined.set(header);
        joined.set(bytes, header.length);
        return run.send(conn, joined);
      }
      run.send(conn, header);
    }
    run.send(conn, bytes);
  }

  /** Sends the headers of lanes that sent no payload. */
  flush(run: OpRun): void {
    for (const [conn, header] of this.#headers) run.send(conn, header);
    this.#headers.clear();
  }

  openRead(run: OpRun, conn: Conn, header: LaneHeader): void {
    const seq = this.#seqIn.get(conn) ?? 0;
    this.#seqIn.set(conn, seq + 1);
    const frame = new Uint8Array(32);
    run.expect(conn, frame, () => {
      const got = decodeRingFrame(frame);
      if (
        got.kind !== 'op' ||
        got.op !== header.op ||
        got.dtype !== header.dtype ||
        got.param !== header.param ||
        got.bytes !== header.bytes ||
        got.seq !== seq
      ) {
        const theirs =
          got.kind === 'op'
            ? `${got.op}(dtype ${got.dtype}, param ${got.param}, ${got.bytes} B, #${got.seq})`
            : got.kind;
        throw new TorusError(
          'TORUS_PROTOCOL_INVALID',
          `collective mismatch: ${this.describe(conn.peer)} runs ${theirs}, rank ${this.rank} runs ${header.op}(dtype ${header.dtype}, param ${header.param}, ${header.bytes} B, #${seq})`,
          { peer: conn.peer },
        );
      }
    });
  }
}
