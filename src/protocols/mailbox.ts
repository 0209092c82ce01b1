/**
 * Frames exchanged between the host (main thread) and an actor's worker thread.
 * A post carries a msgpack-encoded array of frames (batched), plus large binary payloads moved out of band
 * as transferred ArrayBuffers. Every frame is validated before use: a hostile or buggy sender cannot crash
 * the receiver, it only gets its frame rejected.
 */
import type { ErrorJson } from './errors.js';
import { compile, Type, type Shape } from './schema-kit.js';

/** A message body: any plain object with a literal `type`. */
export interface Body {
  readonly type: string;
  readonly [key: string]: unknown;
}
const BodySchema = Type.Unsafe<Body>({
  ...Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
});
const address = Type.String({ minLength: 1, maxLength: 512 });
const corr = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** An error as the sender's `toJSON()` wrote it; the receiver rebuilds it with errorFromJson. */
const ErrorSchema = Type.Unsafe<ErrorJson>({
  ...Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true }),
});
const CLOSED = { additionalProperties: false } as const;

/** Every mailbox frame by its `t`; `msg` first: it is nearly every frame, and the compiled union tries variants in order. */
export const MailboxFrames = {
  /** A message to an address; `corr` set means the sender awaits a reply frame with the same `corr`. */
  msg: Type.Object(
    { t: Type.Literal('msg'), from: address, to: address, body: BodySchema, corr: Type.Optional(corr) },
    CLOSED,
  ),
  reply: Type.Union([
    Type.Object({ t: Type.Literal('reply'), corr, ok: Type.Literal(true), body: Type.Unknown() }, CLOSED),
    Type.Object({ t: Type.Literal('reply'), corr, ok: Type.Literal(false), error: ErrorSchema }, CLOSED),
  ]),
  /** Host → worker: finish the current message, clean up, answer `stopped`, within the deadline. */
  stop: Type.Object({ t: Type.Literal('stop'), deadlineMs: Type.Number({ minimum: 0 }) }, CLOSED),
  /** Worker → host: started and serving. */
  ready: Type.Object({ t: Type.Literal('ready') }, CLOSED),
  stopped: Type.Object({ t: Type.Literal('stopped') }, CLOSED),
  /** Worker → host: the actor's serialisable view changed. */
  snapshot: Type.Object({ t: Type.Literal('snapshot'), view: Type.Unknown() }, CLOSED),
  /** Worker → host: something went wrong; `fatal` means the actor cannot go on and must be restarted. */
  fault: Type.Object({ t: Type.Literal('fault'), fatal: Type.Boolean(), error: ErrorSchema }, CLOSED),
};
export const MailboxFrame = Type.Union(Object.values(MailboxFrames));
export type Frame = Shape<typeof MailboxFrame>;

export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

const codec = compile(MailboxFrame, 'frame', 'frame');

export function isBody(value: unknown): value is Body {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as Body).type === 'string' &&
    (value as Body).type.length > 0
  );
}

/** Validates one decoded frame (a compiled check, on the hot path); throws ValidationError naming the field. Hands back the frame itself. */
export function decodeFrame(value: unknown, path = 'frame'): Frame {
  return codec.decode(value, path);
}
