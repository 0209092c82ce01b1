/**
 * One side of the supervisor ↔ runner channel: a duplex stream carrying length-prefixed msgpack frames.
 * Incoming frames are validated with the given decoder; a bad frame is reported (and the channel closed:
 * a peer that sends garbage is not trusted further). `send` on a closed channel throws ClosedResourceError
 * — the caller decides whether that is expected (shutdown) or a fault (normal running).
 */
import type { Duplex } from 'node:stream';
import { ClosedResourceError, ValidationError } from '../../../protocols/errors.js';
import { encodeFrame, FrameSplitter, type DownFrame, type UpFrame } from '../../../protocols/runner.js';

export interface FrameChannelHandlers<In> {
  onFrame(frame: In): void;
  onInvalid(error: ValidationError): void;
  onClose(): void;
}

export class FrameChannel<In, Out extends DownFrame | UpFrame> {
  readonly #stream: Duplex;
  readonly #name: string;
  #closed = false;

  constructor(name: string, stream: Duplex, decode: (v: unknown) => In, handlers: FrameChannelHandlers<In>) {
    this.#name = name;
    this.#stream = stream;
    const splitter = new FrameSplitter();
    const close = (): void => {
      if (this.#closed) return;
      this.#closed = true;
      handlers.onClose();
    };
    stream.on('data', (chunk: Buffer) => {
      if (this.#closed) return;
      let frames: unknown[];
      try {
        frames = splitter.push(chunk);
      } catch (err) {
        handlers.onInvalid(err instanceof ValidationError ? err : new ValidationError('frame', '', String(err)));
        this.close();
        return;
      }
      for (const raw of frames) {
        let frame: In;
        try {
          frame = decode(raw);
        } catch (err) {
          handlers.onInvalid(err instanceof ValidationError ? err : new ValidationError('frame', '', String(err)));
          continue;
        }
        handlers.onFrame(frame);
        if (this.#closed) return;
      }
    });
    // EPIPE/ECONNRESET when the other side dies: the channel is simply closed.
    stream.on('error', close);
    stream.on('end', close);
    stream.on('close', close);
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(frame: Out): void {
    if (this.#closed || this.#stream.destroyed || !this.#stream.writable) throw new ClosedResourceError(this.#name);
    this.#stream.write(encodeFrame(frame));
  }

  /** Flushes what was written, then closes. */
  async end(): Promise<void> {
    if (this.#stream.destroyed) return;
    await new Promise<void>((resolve) => {
      this.#stream.end(() => resolve());
      setTimeout(resolve, 500).unref();
    });
  }

  close(): void {
    this.#stream.destroy();
  }
}
