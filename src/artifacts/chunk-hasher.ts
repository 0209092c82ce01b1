/**
 * How a receiving node hashes chunks to verify them: on a pool thread (the piscina `artifacts.sha256` task) when
 * the bytes are in shared memory, else inline. Hashing is a third of a receiver's CPU per byte (SHA-256 at
 * ~0.66 ms per MiB with SHA-NI); inline, it holds the thread that reads the sockets, which then lags the link.
 */
import { sha256Hex } from './ids.js';

/** Runs a named CPU task on the node's pool (runtime/cpu-pool.ts). */
export type RunCpuTask = (task: string, input: unknown) => Promise<unknown>;

export type ChunkHasher = (data: Uint8Array) => Promise<string>;

export const inlineHasher: ChunkHasher = async (data) => sha256Hex(data);

export function poolHasher(run: RunCpuTask): ChunkHasher {
  return async (data) => {
    if (!(data.buffer instanceof SharedArrayBuffer)) return sha256Hex(data);
    return (await run('artifacts.sha256', {
      buffer: data.buffer,
      offset: data.byteOffset,
      length: data.byteLength,
    })) as string;
  };
}
