/**
 * The messages other actors may send the network profiler, one TypeBox schema each (internal events are
 * refused): `peers {peers}`, `probe`, `measure {sink?, ip?}`. The machine's types come from them; the peer
 * target's interface (src/actors/network-profiler/probes/reachability.ts, which the probe code owns) is checked equal to its schema.
 */
import { INTERFACE_TYPES } from '../../protocols/events.js';
import { Id } from '../../protocols/event-fields.js';
import {
  canonical,
  compile,
  sameShape,
  StringEnum,
  Type,
  type Shape,
  type TSchema,
} from '../../protocols/schema-kit.js';
import type { PeerAddress, PeerTarget } from './probes/reachability.js';

const CLOSED = { additionalProperties: false } as const;
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
/** Written as the profiler prints it: digits, hex and separators only (the address is probed, never parsed further). */
const IpText = Type.String({ maxLength: 64, pattern: '^[0-9a-fA-F.:]+$' });

export const PeerAddressSchema = Type.Union(
  [
    IpText,
    Type.Object({ ip: IpText, type: Type.Optional(StringEnum(INTERFACE_TYPES)), port: Type.Optional(Port) }, CLOSED),
  ],
  { description: 'an address, or an address with its interface type and port' },
);
export const PeerTargetSchema = Type.Object(
  {
    nodeId: Id,
    incarnation: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    port: Port,
    addresses: Type.Array(PeerAddressSchema, { maxItems: 64 }),
  },
  CLOSED,
);
sameShape<Shape<typeof PeerTargetSchema>, PeerTarget>();
sameShape<Exclude<Shape<typeof PeerAddressSchema>, string>, PeerAddress>();

const message = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, CLOSED);
export const ProfilerMessages = {
  peers: message('peers', { peers: Type.Array(PeerTargetSchema, { maxItems: 1024 }) }),
  probe: message('probe', {}),
  measure: message('measure', { sink: Type.Optional(Id), ip: Type.Optional(IpText) }),
};
export const ProfilerMessage = Type.Union(Object.values(ProfilerMessages) as TSchema[] as [TSchema]);
export type ProfilerMessage = {
  [K in keyof typeof ProfilerMessages]: Shape<(typeof ProfilerMessages)[K]>;
}[keyof typeof ProfilerMessages];

const codec = compile(ProfilerMessage, 'event', 'body');

export function decodeProfilerEvent(body: unknown): ProfilerMessage {
  return canonical(codec.decode(body), 'event', 'body') as ProfilerMessage;
}
