/**
 * One shared WebAssembly memory that holds the ring's working buffers, so the WASM kernels can reduce
 * in place and sockets can read straight into it. Shared (a SharedArrayBuffer) so growing it never
 * detaches views handed out earlier. A small first-fit allocator hands out 64-byte aligned regions.
 */
const PAGE = 65536;
const ALIGN = 64;
const MAX_PAGES = 65536;

export interface Region {
  readonly offset: number;
  readonly bytes: number;
}

export class KernelMemory {
  readonly memory: WebAssembly.Memory;
  #free: { offset: number; bytes: number }[] = [];
  #used = new Map<number, number>();
  #top = ALIGN; // offset 0 is never handed out
  #buffers = new WeakSet<ArrayBufferLike>();

  constructor(initialBytes = PAGE) {
    const pages = Math.max(1, Math.ceil(initialBytes / PAGE));
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
    this.#buffers.add(this.memory.buffer);
  }

  /** The current backing buffer (a new object after growth; all of them alias the same memory). */
  get buffer(): ArrayBufferLike {
    const buffer = this.memory.buffer;
    this.#buffers.add(buffer);
    return buffer;
  }

  /** True when `buffer` is this memory (views on it can be used in place). */
  owns(buffer: ArrayBufferLike): boolean {
    return this.#buffers.has(buffer);
  }

  alloc(bytes: number): Region {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    const index = this.#free.findIndex((block) => block.bytes >= size);
    let offset: number;
    if (index >= 0) {
      const block = this.#free[index] as { offset: number; bytes: number };
      offset = block.offset;
      if (block.bytes === size) this.#free.splice(index, 1);
      else {
        block.offset += size;
        block.bytes -= size;
      }
    } else {
      offset = this.#top;
      this.#top += size;
      const needPages = Math.ceil(this.#top / PAGE);
      const havePages = this.memory.buffer.byteLength / PAGE;
      if (needPages > MAX_PAGES) throw new RangeError(`ring kernel memory: ${this.#top} bytes exceeds 4 GiB`);
      if (needPages > havePages) this.memory.grow(needPages - havePages);
    }
    this.#used.set(offset, size);
    return { offset, bytes };
  }

  free(region: Region): void {
    const size = this.#used.get(region.offset);
    if (size === undefined) return;
    this.#used.delete(region.offset);
    this.#free.push({ offset: region.offset, bytes: size });
    this.#free.sort((a, b) => a.offset - b.offset);
    const merged: { offset: number; bytes: number }[] = [];
    for (const block of this.#free) {
      const last = merged[merged.length - 1];
      if (last && last.offset + last.bytes === block.offset) last.bytes += block.bytes;
      else merged.push({ ...block });
    }
    const tail = merged[merged.length - 1];
    if (tail && tail.offset + tail.bytes === this.#top) {
      this.#top = tail.offset;
      merged.pop();
    }
    this.#free = merged;
  }

  bytesView(region: Region): Uint8Array {
    return new Uint8Array(this.buffer, region.offset, region.bytes);
  }
}
