/**
 * Node-to-node frames of the cluster protocol (docs/cluster.md). On the wire each frame is
 * `[u32 BE length][msgpack body]`, the body sealed with aes-256-gcm once the handshake proved the cluster key
 * (v3); the framing lives in
 * src/actors/cluster/transport/frame-codec.ts, this file is the schema. `decodePeerFrame` is strict: unknown types and unknown
 * fields are rejected, every number is range-checked, and it never throws anything but ValidationError.
 */
import type { ErrorJson } from './errors.js';
import { ValidationError } from './errors.js';
import { ErrorJsonSchema, EventBody } from './cluster-schema.js';
import { compile, StringEnum, Type, type Shape, type TSchema } from './schema-kit.js';

export { EventBody } from './cluster-schema.js';
/**
 * 2: the quorum rule and the leader's yield to a more complete log (docs/cluster.md, Agreement). The frames are
 * unchanged, but a v1 node would still elect itself alone in a minority, so the two are not mixed in one cluster
 * (each lists the other as `incompatible-version`).
 * 3: the handshake proof covers both hellos and every frame after it is encrypted (docs/cluster.md, Handshake);
 * open-mode nodes must answer with a proof too. v2 and v3 cannot talk.
 * 4: commit before acknowledge: heartbeats and appends carry the leader's commit index (and its chain hash),
 *    followers answer `append-ack` once entries are on disk; a v3 node would apply unacknowledged entries.
 */
export const PROTOCOL_VERSION = 4;
/** Largest frame body accepted after the handshake (snapshots are the big ones). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Largest frame accepted before the peer is authenticated: hello/auth/refuse only. */
export const MAX_HANDSHAKE_BYTES = 4096;
/** Most entries in one append frame and most indices one gap request may ask for. */
export const MAX_BATCH = 512;
export const MAX_PEERS_LISTED = 256;

export const ROLES = ['discovering', 'follower', 'candidate', 'leader'] as const;
export type Role = (typeof ROLES)[number];

export const REFUSE_REASONS = [
  'other-cluster',
  'incompatible-version',
  'auth-failure',
  'auth-required',
  'self',
  'duplicate',
  'protocol-error',
] as const;
export type RefuseReason = (typeof REFUSE_REASONS)[number];

const CLOSED = { additionalProperties: false } as const;
const ID_MAX = 128;
/** A safe integer from `min` (log indices start at 1, the topology decoder's rule; 0 means "nothing yet"). */
const int = (min = 0, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum: min, maximum: max });
const text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const hash = text(32);
const leader = Type.Union([text(ID_MAX), Type.Null()], { description: 'a node id or null' });
const frame = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P, description?: string) =>
  Type.Object({ type: Type.Literal(type), ...properties }, { ...CLOSED, ...(description ? { description } : {}) });

/** One sequenced event: `index` is global and gap-free from 1, `term` the leader term that sequenced it (at most the frame's). */
export const IndexedEnvelope = Type.Object(
  { index: int(1), term: int(), event: EventBody, at: Type.Optional(Type.Number()) },
  CLOSED,
);
export type IndexedEnvelope = Shape<typeof IndexedEnvelope>;

export const Hello = frame('hello', {
  v: int(0, 65535),
  nodeId: text(ID_MAX),
  cluster: text(64),
  incarnation: int(),
  startedAt: int(),
  port: int(0, 65535),
  apiPort: int(0, 65535),
  nonce: Type.String({ pattern: '^[0-9a-f]{32}$', description: '16 random bytes as hex' }),
  auth: Type.Boolean(),
  /** What the leader needs to write this node's NodeJoined: display name, software version, reachable IPs. */
  name: text(256),
  version: text(64),
  addresses: Type.Array(text(64), { maxItems: 64 }),
});
export type Hello = Shape<typeof Hello>;

export const PeerAddress = Type.Object({ nodeId: text(ID_MAX), host: text(255), port: int(1, 65535) }, CLOSED);
export type PeerAddress = Shape<typeof PeerAddress>;

/** Every peer frame by its `type`. */
export const PeerFrameSchemas = {
  hello: Hello,
  auth: frame(
    'auth',
    { proof: Type.String({ pattern: '^[0-9a-f]{64}$' }) },
    'proof of the cluster key: HMAC(HKDF(key, transcript of both hellos), sender id), hex (src/actors/cluster/transport/auth.ts)',
  ),
  refuse: frame(
    'refuse',
    { reason: StringEnum(REFUSE_REASONS), detail: Type.Optional(text(512)) },
    'sent just before closing a connection that will not be joined, so the other side can list why',
  ),
  heartbeat: frame(
    'heartbeat',
    {
      term: int(),
      role: StringEnum(ROLES),
      leader,
      lastIndex: int(),
      lastTerm: int(),
      lastHash: hash,
      commit: int(),
      commitHash: hash,
    },
    "`lastHash`: chain hash of the sender's log at lastIndex, so a follower can tell a diverged log",
  ),
  'vote-request': frame('vote-request', { term: int(1), lastIndex: int(), lastTerm: int() }),
  vote: frame('vote', { term: int(), granted: Type.Boolean(), leader, lastIndex: int(), lastTerm: int() }),
  append: frame(
    'append',
    { term: int(1), entries: Type.Array(IndexedEnvelope, { maxItems: MAX_BATCH }), commit: int(), commitHash: hash },
    'leader → follower: consecutive or not, the follower orders them',
  ),
  'append-ack': frame(
    'append-ack',
    { term: int(1), index: int(), hash },
    'follower → leader: my log holds everything up to `index` on disk (fsynced); `hash` = my chain hash there',
  ),
  'gap-request': frame(
    'gap-request',
    { from: int(1), to: int(), prevHash: hash },
    'follower → leader: send me [from, to] (to - from < MAX_BATCH); `prevHash` is my chain hash at from - 1',
  ),
  'snapshot-request': frame('snapshot-request', {}),
  snapshot: frame(
    'snapshot',
    { term: int(1), index: int(), lastTerm: int(), lastHash: hash, digest: text(128), state: Type.Unknown() },
    'leader → follower: the state after applying everything up to `index` (whose entry had `lastTerm`)',
  ),
  forward: frame(
    'forward',
    {
      id: int(),
      kind: StringEnum(['propose', 'command']),
      body: Type.Union([EventBody, Type.Array(EventBody, { minItems: 1, maxItems: MAX_BATCH })], {
        description: 'an event or 1..MAX_BATCH events',
      }),
    },
    'any node → leader: a proposal (events) or a command, answered by forward-reply with the same id',
  ),
  'forward-reply': Type.Union([
    frame('forward-reply', { id: int(), ok: Type.Literal(true), outcome: Type.Optional(Type.Unknown()) }),
    frame('forward-reply', { id: int(), ok: Type.Literal(false), error: ErrorJsonSchema }),
  ]),
  peers: frame(
    'peers',
    { peers: Type.Array(PeerAddress, { maxItems: MAX_PEERS_LISTED }) },
    'gossip: cluster addresses of the peers the sender is joined with',
  ),
};
export const PeerFrame = Type.Union(Object.values(PeerFrameSchemas) as TSchema[] as [TSchema]);

type Frames = typeof PeerFrameSchemas;
type Reply = Shape<Frames['forward-reply']>;
/** Decoded: a forward-reply always has its outcome (null when the leader sent none) and an error's details. */
export type PeerFrame =
  | { [K in Exclude<keyof Frames, 'forward-reply'>]: Shape<Frames[K]> }[Exclude<keyof Frames, 'forward-reply'>]
  | (Extract<Reply, { ok: true }> & { readonly outcome: unknown })
  | (Omit<Extract<Reply, { ok: false }>, 'error'> & { readonly error: ErrorJson });
export type PeerFrameType = PeerFrame['type'];

/** Lenient look at a hello, used only to say *why* a peer cannot join (its version may have other fields). */
export function peekHello(value: unknown): { v?: number; nodeId?: string; cluster?: string } {
  if (typeof value !== 'object' || value === null) return {};
  const rec = value as Record<string, unknown>;
  if (rec.type !== 'hello') return {};
  return {
    ...(typeof rec.v === 'number' ? { v: rec.v } : {}),
    ...(typeof rec.nodeId === 'string' && rec.nodeId.length <= ID_MAX ? { nodeId: rec.nodeId } : {}),
    ...(typeof rec.cluster === 'string' && rec.cluster.length <= 64 ? { cluster: rec.cluster } : {}),
  };
}

const codec = compile(PeerFrame, 'frame');
const envelopeCodec = compile(IndexedEnvelope, 'frame');

/** One envelope alone (cluster state sync); `maxTerm`: a leader never sends entries of a later term than its own. */
export function decodeEnvelope(value: unknown, path: string, maxTerm = Number.MAX_SAFE_INTEGER): IndexedEnvelope {
  const envelope = envelopeCodec.decode(value, path);
  if (envelope.term > maxTerm) throw new ValidationError('frame', `${path}.term`, `out of range [0, ${maxTerm}]`);
  return envelope;
}

/**
 * Strict: unknown types and fields are refused, every number range-checked; throws only ValidationError. The
 * schema check is compiled; after it only what it cannot say (entry terms, gap bounds, reply defaults).
 */
export function decodePeerFrame(value: unknown, path = 'frame'): PeerFrame {
  const f = codec.decode(value, path) as Shape<typeof PeerFrame> & PeerFrame;
  switch (f.type) {
    case 'append':
      f.entries.forEach((e, i) => {
        if (e.term > f.term)
          throw new ValidationError('frame', `${path}.entries[${i}].term`, `out of range [0, ${f.term}]`);
      });
      return f;
    case 'gap-request':
      if (f.to < f.from || f.to - f.from >= MAX_BATCH)
        throw new ValidationError('frame', `${path}.to`, `expected from <= to < from + ${MAX_BATCH}`);
      return f;
    case 'forward-reply':
      return f.ok
        ? { type: 'forward-reply', id: f.id, ok: true, outcome: f.outcome ?? null }
        : {
            type: 'forward-reply',
            id: f.id,
            ok: false,
            error: { code: f.error.code, message: f.error.message, details: f.error.details ?? {} },
          };
    default:
      return f;
  }
}

/** Frames allowed before the handshake completes. */
export function isHandshakeFrame(frame: PeerFrame): boolean {
  return frame.type === 'hello' || frame.type === 'auth' || frame.type === 'refuse';
}
