/**
 * The part of the WebAssembly JS API the native kernels and aligned buffers use. Node has the API, but
 * @types/node does not declare it, and the DOM lib that does would also bring browser globals (window, document,
 * fetch's DOM types) into server code that must not use them.
 */
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(delta: number): number;
  }
  class Module {
    constructor(bytes: BufferSource);
  }
  type ExportValue = ((...args: number[]) => unknown) | Memory;
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, Memory | ((...args: number[]) => unknown)>>);
    readonly exports: Record<string, ExportValue>;
  }
}
