/**
 * The reduction kernels of reduce.wat, assembled and embedded so the build needs no wabt.
 * Regenerate after editing reduce.wat:
 *   wat2wasm --enable-threads reduce.wat -o /tmp/reduce.wasm && base64 -w0 /tmp/reduce.wasm
 * and paste the result below (a test checks that these bytes compile and match the JS fallback).
 */
export const REDUCE_WASM_BASE64 =
  'AGFzbQEAAAABBwFgA39/fwACDwEDZW52A21lbQIDAYCABAMHBgAAAAAAAAc9BgdzdW1fZjMyAAAHbWF4X2YzMgABB21pbl9mMzIAAgdzdW1faTMyAAMHbWF4X2kzMgAEB21pbl9pMzIABQr5BgaPAQEEfyAAIAJBAnRqIQMgACACQXhxQQJ0aiEEAkADQCAAIARPDQEgACAA/QAEACAB/QAEAP3kAf0LBAAgACAA/QAEECAB/QAEEP3kAf0LBBAgAEEgaiEAIAFBIGohAQwACwsCQANAIAAgA08NASAAIAAqAgAgASoCAJI4AgAgAEEEaiEAIAFBBGohAQwACwsLjwEBBH8gACACQQJ0aiEDIAAgAkF4cUECdGohBAJAA0AgACAETw0BIAAgAP0ABAAgAf0ABAD96QH9CwQAIAAgAP0ABBAgAf0ABBD96QH9CwQQIABBIGohACABQSBqIQEMAAsLAkADQCAAIANPDQEgACAAKgIAIAEqAgCXOAIAIABBBGohACABQQRqIQEMAAsLC48BAQR/IAAgAkECdGohAyAAIAJBeHFBAnRqIQQCQANAIAAgBE8NASAAIAD9AAQAIAH9AAQA/egB/QsEACAAIAD9AAQQIAH9AAQQ/egB/QsEECAAQSBqIQAgAUEgaiEBDAALCwJAA0AgACADTw0BIAAgACoCACABKgIAljgCACAAQQRqIQAgAUEEaiEBDAALCwuPAQEEfyAAIAJBAnRqIQMgACACQXhxQQJ0aiEEAkADQCAAIARPDQEgACAA/QAEACAB/QAEAP2uAf0LBAAgACAA/QAEECAB/QAEEP2uAf0LBBAgAEEgaiEAIAFBIGohAQwACwsCQANAIAAgA08NASAAIAAoAgAgASgCAGo2AgAgAEEEaiEAIAFBBGohAQwACwsLmAEBBH8gACACQQJ0aiEDIAAgAkF4cUECdGohBAJAA0AgACAETw0BIAAgAP0ABAAgAf0ABAD9uAH9CwQAIAAgAP0ABBAgAf0ABBD9uAH9CwQQIABBIGohACABQSBqIQEMAAsLAkADQCAAIANPDQEgACAAKAIAIgUgASgCACIGIAUgBkobNgIAIABBBGohACABQQRqIQEMAAsLC5gBAQR/IAAgAkECdGohAyAAIAJBeHFBAnRqIQQCQANAIAAgBE8NASAAIAD9AAQAIAH9AAQA/bYB/QsEACAAIAD9AAQQIAH9AAQQ/bYB/QsEECAAQSBqIQAgAUEgaiEBDAALCwJAA0AgACADTw0BIAAgACgCACIFIAEoAgAiBiAFIAZIGzYCACAAQQRqIQAgAUEEaiEBDAALCws=';

/** Kernel export names: `${op}_${type}`, each (dstOffset, srcOffset, count) in bytes/elements. */
export type WasmKernelName = 'sum_f32' | 'max_f32' | 'min_f32' | 'sum_i32' | 'max_i32' | 'min_i32';
export type WasmKernels = Record<WasmKernelName, (dst: number, src: number, count: number) => void>;

let compiled: WebAssembly.Module | null | undefined;

/** The compiled module, or null where WebAssembly SIMD or threads are unavailable (the JS fallback is used then). */
export function reduceModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(REDUCE_WASM_BASE64, 'base64'));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

export function instantiateKernels(memory: WebAssembly.Memory): WasmKernels | null {
  const module = reduceModule();
  if (!module) return null;
  const instance = new WebAssembly.Instance(module, { env: { mem: memory } });
  return instance.exports as unknown as WasmKernels;
}
