/**
 * Field schemas shared by the cluster events (events.ts), commands (commands.ts), plans and workloads: ids, IP
 * addresses, endpoints, reasons, counts. TypeBox (./schema-kit.ts): the same object types, checks and documents.
 */

import { compile, Type, type Shape, type Where } from './schema-kit.js';

/** Identifiers (node, instance, task, workload ids): printable, bounded, never a prototype key. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,255}$/;

export type NodeId = string;
export type InstanceId = string;
export type TaskId = string;

export const W = 'event' satisfies Where;
export const MAX_PORT = 65535;
export const CLOSED = { additionalProperties: false } as const;

/**
 * Identifiers (node, instance, task, workload ids): printable, bounded, never a prototype key. The pattern bounds
 * the length already; the lengths are said too so a document reader (or a generated client) sees them.
 */
export const IdField = (description?: string) =>
  Type.String({ minLength: 1, maxLength: 256, pattern: ID_PATTERN.source, ...(description ? { description } : {}) });
export const Id = IdField();
/** An IPv4 or IPv6 address (wire: node:net's reading, zone ids included). */
export const Ip = Type.String({ maxLength: 64, format: 'ip' });

const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const V4 = `${OCTET}(\\.${OCTET}){3}`;
const H = '[0-9a-fA-F]{1,4}';
const V6 = [
  `(${H}:){7}${H}`,
  `(${H}:){1,7}:`,
  `(${H}:){1,6}:${H}`,
  `(${H}:){1,5}(:${H}){1,2}`,
  `(${H}:){1,4}(:${H}){1,3}`,
  `(${H}:){1,3}(:${H}){1,4}`,
  `(${H}:){1,2}(:${H}){1,5}`,
  `${H}:(:${H}){1,6}`,
  `:((:${H}){1,7}|:)`,
  `::(ffff(:0{1,4})?:)?${V4}`,
  `(${H}:){1,4}:${V4}`,
];
/**
 * An IP address as an API caller writes it: a pattern any JSON Schema tool checks the same way (a `format` is
 * only a hint to most), every string it matches one node:net reads as an address (the tests check that).
 */
export const IP_ADDRESS_PATTERN = `^(${V4}|${V6.join('|')})$`;
export const IpAddress = (description: string) =>
  Type.String({
    minLength: 2,
    maxLength: 64,
    pattern: IP_ADDRESS_PATTERN,
    description: `${description}: IPv4 or IPv6`,
  });
export const Port = Type.Integer({ minimum: 0, maximum: MAX_PORT });
export const Reason = Type.String({ maxLength: 1024 });
/** A count, size or incarnation: a safe integer from `min`. */
export const Count = (min = 0, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum: min, maximum: max });
/** A finite non-negative number (milliseconds, bits per second, epoch stamps). */
export const Amount = Type.Number({ minimum: 0 });
export const ExitCode = Type.Integer({ minimum: -(2 ** 31), maximum: 2 ** 32 });
export const Signal = Type.String({ maxLength: 32 });

export const Endpoint = Type.Object({ ip: Ip, port: Port }, CLOSED);
export type Endpoint = Shape<typeof Endpoint>;

const ipCodecs = new Map<Where, ReturnType<typeof compile<typeof Ip>>>();
/** One IP address field, checked alone (snapshots, frames). */
export function decodeIp(v: unknown, path: string, where: Where = W): string {
  let codec = ipCodecs.get(where);
  if (!codec) ipCodecs.set(where, (codec = compile(Ip, where)));
  return codec.decode(v, path);
}
