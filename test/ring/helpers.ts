/** Shared helpers for the ring tests: free ports, a loopback ring in one process, exact inputs. */
import net from 'node:net';
import { RingCommunicator, type RingConnectOptions } from '../../src/ring/index.js';
import type { RingArray, Dtype } from '../../src/ring/index.js';
import { numberToHalf } from '../../src/native/kernels/float16.js';

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise<net.Server>((resolve) => {
    const server = net.createServer();
    server.listen(0, '0.0.0.0', () => resolve(server));
  })));
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Rank r listens on 0.0.0.0:port_r and is reached at 127.0.0.(r+1) (MLX hostfile semantics). */
export function loopbackHosts(ports: number[], rank: number): { ip: string; port: number }[] {
  return ports.map((port, r) => ({ ip: r === rank ? '0.0.0.0' : `127.0.0.${r + 1}`, port }));
}

export async function loopbackRing(n: number, options: Partial<RingConnectOptions> = {}): Promise<RingCommunicator[]> {
  const ports = await freePorts(n);
  return Promise.all(Array.from({ length: n }, (_, rank) => RingCommunicator.connect({ timeoutMs: 5000, connectTimeoutMs: 5000, ...options, rank, hosts: loopbackHosts(ports, rank) })));
}

/** Integer-valued inputs, so any summation order is exact (nccl-tests' verifiable idea). */
export function exactInput(dtype: Dtype, count: number, rank: number, seed = 0): RingArray {
  const value = (i: number) => ((i * 7 + seed * 13 + rank * 5) % 23) - 11 + rank;
  if (dtype === 'float32') return Float32Array.from({ length: count }, (_, i) => value(i));
  if (dtype === 'int32') return Int32Array.from({ length: count }, (_, i) => value(i) * 100003);
  return Uint16Array.from({ length: count }, (_, i) => numberToHalf(value(i)));
}

export function bitsEqual(a: RingArray, b: RingArray): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

export function firstDifference(a: RingArray, b: RingArray): string {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return `element ${i}: ${a[i]} vs ${b[i]}`;
  return a.length === b.length ? 'equal' : `length ${a.length} vs ${b.length}`;
}
