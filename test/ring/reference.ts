/** Reference results for the collectives, computed locally in rank order. */
import { reduceArrays, reduceHalf, type ReduceOp } from '../../src/native/kernels/index.js';
import type { RingArray } from '../../src/ring/index.js';

export function referenceAllReduce(inputs: RingArray[], op: ReduceOp): RingArray {
  const result = (inputs[0] as RingArray).slice();
  for (const input of inputs.slice(1)) {
    if (result instanceof Uint16Array) reduceHalf(op, result, input as Uint16Array);
    else reduceArrays(op, result, input as Float32Array | Int32Array, result instanceof Int32Array);
  }
  return result;
}

export function referenceAllGather(inputs: RingArray[]): RingArray {
  const first = inputs[0] as RingArray;
  const out = new (first.constructor as new (n: number) => RingArray)(first.length * inputs.length);
  inputs.forEach((input, r) => out.set(input as never, r * first.length));
  return out;
}

export function tcpHandles(): number {
  return process.getActiveResourcesInfo().filter((name) => name.startsWith('TCP')).length;
}

/** TCP handle count once pending closes have finished (polls up to 2 s; a real leak never settles). */
export async function tcpHandlesSettled(expected: number): Promise<number> {
  for (let i = 0; i < 40 && tcpHandles() !== expected; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return tcpHandles();
}
