/**
 * Ordered, zero-copy reads from one socket. Callers post targets in the order the peer sends them;
 * Node's `onread` buffer generator makes the kernel read straight into the head target (no per-read
 * allocation, no copy). Bytes that arrive before a target is posted go to a stash and are copied out
 * when it is; past `maxStashBytes` the socket is paused (TCP back-pressure then stops the peer).
 * Node asks for the next read's buffer right after each read, so the first read after an idle spell
 * (e.g. the start of each collective) lands in the spare even when its target is posted by then: at
 * most one read (≤ 64 KiB) per connection per collective is copied (`bytesCopied`; ~0.1 % of the bytes
 * of a 2-rank 16 MiB all-reduce, a few % with 4 ranks whose neighbours run ahead).
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

interface ReadItem {
  readonly target: Uint8Array;
  filled: number;
  readonly onDone: () => void;
}

const SPARE_BYTES = 64 * 1024;

export class StreamReader {
  #items: ReadItem[] = [];
  #head = 0;
  #stash: Uint8Array[] = [];
  #stashOffset = 0;
  #stashBytes = 0;
  #spare = new Uint8Array(SPARE_BYTES);
  #draining = false;
  #paused = false;
  #socket: Socket | null = null;
  readonly #maxStashBytes: number;
  readonly #onFault: (error: unknown) => void;
  /** performance.now() of the last byte received. */
  lastProgress = performance.now();
  bytesRead = 0;
  /** Bytes that arrived before their target was posted and were copied out of the stash (the only user-space copy). */
  bytesCopied = 0;

  constructor(onFault: (error: unknown) => void, maxStashBytes = 64 * 1024 * 1024) {
    this.#onFault = onFault;
    this.#maxStashBytes = maxStashBytes;
  }

  /** Options for `new net.Socket({ onread })`. */
  onread(): { buffer: () => Uint8Array; callback: (nread: number, buf: Uint8Array) => boolean } {
    return { buffer: () => this.#nextBuffer(), callback: (nread, buf) => this.#onRead(nread, buf) };
  }

  attach(socket: Socket): void {
    this.#socket = socket;
  }

  /** Number of posted targets not yet filled. */
  get pending(): number {
    return this.#items.length - this.#head;
  }

  /** Posts the next target; `onDone` runs (synchronously, in order) once it is full. */
  expect(target: Uint8Array, onDone: () => void): void {
    this.#items.push({ target, filled: 0, onDone });
    this.#drain();
  }

  /** Drops posted targets (after a failure: their owner has already been rejected). */
  clear(): void {
    this.#items = [];
    this.#head = 0;
  }

  #nextBuffer(): Uint8Array {
    const item = this.#items[this.#head];
    if (item && this.#stashBytes === 0) return item.target.subarray(item.filled);
    return this.#spare;
  }

  #onRead(nread: number, buf: Uint8Array): boolean {
    this.lastProgress = performance.now();
    this.bytesRead += nread;
    if (buf === this.#spare) {
      this.#stash.push(this.#spare.slice(0, nread));
      this.#stashBytes += nread;
    } else {
      const item = this.#items[this.#head];
      if (item) item.filled += nread;
    }
    this.#drain();
    if (this.#stashBytes > this.#maxStashBytes) {
      this.#paused = true;
      return false;
    }
    return true;
  }

  #drain(): void {
    if (this.#draining) return; // an onDone posting more targets: the running loop picks them up
    this.#draining = true;
    try {
      for (;;) {
        const item = this.#items[this.#head];
        if (!item) break;
        if (item.filled < item.target.length && this.#stashBytes > 0) this.#copyFromStash(item);
        if (item.filled < item.target.length) break;
        this.#head++;
        if (this.#head > 1024) {
          this.#items = this.#items.slice(this.#head);
          this.#head = 0;
        }
        item.onDone();
      }
    } catch (error) {
      this.#onFault(error);
    } finally {
      this.#draining = false;
    }
    if (this.#paused && this.#stashBytes <= this.#maxStashBytes / 2) {
      this.#paused = false;
      this.#socket?.resume();
    }
  }

  #copyFromStash(item: ReadItem): void {
    while (item.filled < item.target.length && this.#stash.length > 0) {
      const chunk = this.#stash[0] as Uint8Array;
      const take = Math.min(chunk.length - this.#stashOffset, item.target.length - item.filled);
      item.target.set(chunk.subarray(this.#stashOffset, this.#stashOffset + take), item.filled);
      this.bytesCopied += take;
      item.filled += take;
      this.#stashOffset += take;
      this.#stashBytes -= take;
      if (this.#stashOffset === chunk.length) {
        this.#stash.shift();
        this.#stashOffset = 0;
      }
    }
  }
}
