/**
 * Field types and decoders shared by the cluster events (events.ts) and commands (commands.ts): ids, IP
 * addresses, endpoints, reasons, and `compact`, which keeps decoded values canonical.
 */
import { isIP } from 'node:net';
import { fail, id, int, isPlainObject, num, obj, opt, str, type Where } from '../core/topology/reader.js';

export type NodeId = string;
export type InstanceId = string;
export type TaskId = string;

export interface Endpoint { readonly ip: string; readonly port: number }

export type Fields = Readonly<Record<string, unknown>>;

export const W: Where = 'event';
export const MAX_PORT = 65535;
export const reason = (v: unknown, p: string): string => str(W, v, p, { max: 1024 });
export const nodeId = (v: unknown, p: string): string => id(W, v, p);
export const optNum = (v: unknown, p: string): number | undefined => opt(v, (x) => num(W, x, p, 0));
export const optInt = (v: unknown, p: string, min = 0): number | undefined => opt(v, (x) => int(W, x, p, min));

export function decodeIp(v: unknown, path: string, where: Where = W): string {
  const ip = str(where, v, path, { max: 64 });
  if (isIP(ip) === 0) fail(where, path, 'not an IP address');
  return ip;
}
export function endpoint(v: unknown, p: string): Endpoint {
  const o = obj(W, v, p, ['ip', 'port']);
  return { ip: decodeIp(o.ip, `${p}.ip`), port: int(W, o.port, `${p}.port`, 0, MAX_PORT) };
}
/** Drops absent optional fields so decoded values compare and serialise canonically. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The `type` of a plain object, read first so that an unknown type is reported as such. */
export function typeField(v: unknown, p: string): unknown {
  return obj(W, v, p, ['type'], isPlainObject(v) ? Object.keys(v) : []).type;
}
