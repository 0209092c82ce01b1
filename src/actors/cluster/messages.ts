/**
 * The cluster actor's incoming events and request bodies, one TypeBox schema each (src/protocols/schema-kit.ts):
 * the machine's types come from them (`Shape<>`), and the decoders are their compiled checks. Errors are
 * ValidationError('frame', `body.…`) (TORUS_PROTOCOL_INVALID), as before the schemas.
 */
import { ValidationError } from '../../protocols/errors.js';
import { EventBody } from '../../protocols/cluster-schema.js';
import { MAX_BATCH, ROLES } from '../../protocols/peer-frames.js';
import { canonical, compile, StringEnum, Type, type Shape, type TSchema } from '../../protocols/schema-kit.js';

export const CLUSTER_REQUESTS = ['propose', 'command', 'peers', 'members', 'role'] as const;

const CLOSED = { additionalProperties: false } as const;
const Index = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const message = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, CLOSED);

/** The events other actors may send the cluster actor (the rest of its events come from its own shell). */
export const ClusterActorMessages = {
  'cluster.role': message('cluster.role', {
    role: StringEnum(ROLES),
    term: Index,
    leader: Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], {
      description: 'a node id or null',
    }),
  }),
};
export const ClusterActorMessage = Type.Union(Object.values(ClusterActorMessages) as TSchema[] as [TSchema]);
export type ClusterActorMessage = {
  [K in keyof typeof ClusterActorMessages]: Shape<(typeof ClusterActorMessages)[K]>;
}[keyof typeof ClusterActorMessages];

/** `propose {event}` or `propose {events: [...]}`: events from local actors, sequenced by the leader (checked when applied). */
export const ProposeRequest = Type.Object(
  {
    type: Type.Optional(Type.Literal('propose')),
    event: Type.Optional(EventBody),
    events: Type.Optional(Type.Array(EventBody, { minItems: 1, maxItems: MAX_BATCH })),
  },
  CLOSED,
);
/** `command {command}`: a command for the leader (e.g. PlaceInstance), decoded by the command handler. */
export const CommandRequest = Type.Object({ type: Type.Optional(Type.Literal('command')), command: EventBody }, CLOSED);

const messageCodec = compile(ClusterActorMessage, 'frame', 'body');
const proposeCodec = compile(ProposeRequest, 'frame', 'body');
const commandCodec = compile(CommandRequest, 'frame', 'body');

export function decodeClusterActorEvent(raw: unknown): ClusterActorMessage {
  return messageCodec.decode(raw) as ClusterActorMessage;
}

export function decodePropose(raw: unknown): EventBody[] {
  const r = proposeCodec.decode(raw);
  if (r.event !== undefined && r.events !== undefined)
    throw new ValidationError('frame', 'body.events', 'expected event or events, not both');
  if (r.event !== undefined) return [canonical(r.event, 'frame', 'body.event')];
  if (r.events === undefined) throw new ValidationError('frame', 'body.events', `expected 1..${MAX_BATCH} events`);
  return canonical([...r.events], 'frame', 'body.events');
}

export function decodeCommandRequest(raw: unknown): EventBody {
  return canonical(commandCodec.decode(raw).command, 'frame', 'body.command');
}
