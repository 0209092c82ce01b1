/**
 * Page-aligned buffers, for `O_DIRECT` file I/O (which refuses memory not aligned to the device's block size).
 * Node has no aligned allocator: `Buffer.allocUnsafeSlow` is malloc'd (16-byte aligned). V8 maps a WebAssembly
 * memory with the page allocator, so its first byte is page-aligned; buffers are carved out of such memories
 * ("slabs") at multiples of ALIGN. A slab lives as long as any buffer cut from it; callers pool the buffers
 * (chunk-buffers.ts), so slabs are few and reused. Each slab reserves address space (V8 adds guard regions around a
 * wasm memory), hence slabs of SLAB_BYTES rather than one memory per buffer. The memories are shared (their buffer
 * is a SharedArrayBuffer): a worker thread can hash a chunk where it lies (artifacts/hash-task.ts).
 */

import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** The open(2) flag for direct I/O; undefined where there is none (macOS, Windows): callers use the page cache. */
export const O_DIRECT: number | undefined = constants.O_DIRECT;

/** The alignment of every buffer (and of the lengths and file offsets direct I/O is used for). */
export const ALIGN = 4096;
const WASM_PAGE = 65536;
const SLAB_BYTES = 64 * 1024 * 1024;

let slab: SharedArrayBuffer | undefined;
let used = 0;
const aligned = new WeakSet<Buffer>();

/** False once creating a WebAssembly memory failed (`node --jitless` has no WebAssembly): plain buffers then. */
let wasmUsable = typeof WebAssembly === 'object';

/**
 * A page-aligned buffer of `length` bytes (contents undefined). Where no WebAssembly memory can be made, a plain
 * buffer (not aligned: isAligned() says so, and callers use the page cache).
 */
export function alignedBuffer(length: number): Buffer {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`alignedBuffer: bad length ${length}`);
  if (wasmUsable) {
    try {
      return carve(length);
    } catch {
      wasmUsable = false;
    }
  }
  return Buffer.allocUnsafeSlow(length);
}

function carve(length: number): Buffer {
  const span = Math.max(ALIGN, Math.ceil(length / ALIGN) * ALIGN);
  let buf: Buffer;
  if (span > SLAB_BYTES / 4) {
    // A big buffer gets a memory of its own rather than wasting most of a slab.
    const pages = Math.ceil(span / WASM_PAGE);
    buf = Buffer.from(new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true }).buffer, 0, length);
  } else {
    if (!slab || used + span > slab.byteLength) {
      const pages = SLAB_BYTES / WASM_PAGE;
      slab = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true })
        .buffer as unknown as SharedArrayBuffer;
      used = 0;
    }
    buf = Buffer.from(slab, used, length);
    used += span;
  }
  aligned.add(buf);
  return buf;
}

/** True for a buffer alignedBuffer returned (a view of part of one is not known to be aligned). */
export function isAligned(buf: Uint8Array): boolean {
  return Buffer.isBuffer(buf) && aligned.has(buf);
}

/** Whether `length` bytes of `buf` may go to or from file offset `offset` with O_DIRECT. */
export function fitsDirect(buf: Uint8Array, offset: number, length = buf.byteLength): boolean {
  return O_DIRECT !== undefined && isAligned(buf) && offset % ALIGN === 0 && length % ALIGN === 0;
}

/**
 * `path` opened with O_DIRECT added to `flags`, or undefined where there is no direct I/O: no O_DIRECT on this
 * platform, or a filesystem that refuses it (EINVAL: tmpfs on older kernels, some FUSE). Callers use the page cache
 * then, and also when a read or write answers EINVAL (a device whose block is larger than ALIGN).
 */
export function openDirect(path: string, flags: number): Promise<FileHandle | undefined> {
  if (O_DIRECT === undefined) return Promise.resolve(undefined);
  return open(path, flags | O_DIRECT).catch(() => undefined);
}
