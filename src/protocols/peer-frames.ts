/**
 * Node-to-node frames of the cluster protocol (DESIGN.md §4). On the wire each frame is
 * `[u32 BE length][msgpack body]`, the body sealed with aes-256-gcm once the handshake proved the cluster key
 * (v3); the framing lives in
 * src/cluster/frame-codec.ts, this file is the schema. `decodePeerFrame` is strict: unknown types and unknown
 * fields are rejected, every number is range-checked, and it never throws anything but ValidationError.
 */
import type { ErrorJson } from '../core/errors.js';
import { arr, body, bool, errorJson, fail, int, num, oneOf, optStr, record, str, type Rec } from './cluster-schema.js';

/**
 * 2: the quorum rule and the leader's yield to a more complete log (docs/cluster.md, Agreement). The frames are
 * unchanged, but a v1 node would still elect itself alone in a minority, so the two are not mixed in one cluster
 * (each lists the other as `incompatible-version`).
 * 3: the handshake proof covers both hellos and every frame after it is encrypted (docs/cluster.md, Handshake);
 * open-mode nodes must answer with a proof too. v2 and v3 cannot talk.
 * 4: commit before acknowledge (#13): heartbeats and appends carry the leader's commit index (and its chain hash),
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

export type Role = 'discovering' | 'follower' | 'candidate' | 'leader';
export const ROLES: readonly Role[] = ['discovering', 'follower', 'candidate', 'leader'];

export type RefuseReason = 'other-cluster' | 'incompatible-version' | 'auth-failure' | 'auth-required' | 'self' | 'duplicate' | 'protocol-error';
export const REFUSE_REASONS: readonly RefuseReason[] = ['other-cluster', 'incompatible-version', 'auth-failure', 'auth-required', 'self', 'duplicate', 'protocol-error'];

/** An event as carried by the cluster: opaque here, checked by the topology decoder when applied. */
export interface EventBody { readonly type: string; readonly [key: string]: unknown }

/** One sequenced event: `index` is global and gap-free from 0, `term` is the leader term that sequenced it. */
export interface IndexedEnvelope { readonly index: number; readonly term: number; readonly event: EventBody; readonly at?: number }

export interface Hello {
  readonly type: 'hello'; readonly v: number; readonly nodeId: string; readonly cluster: string;
  readonly incarnation: number; readonly startedAt: number; readonly port: number; readonly apiPort: number;
  readonly nonce: string; readonly auth: boolean;
  /** What the leader needs to write this node's NodeJoined: display name, software version, reachable IPs. */
  readonly name: string; readonly version: string; readonly addresses: readonly string[];
}

export type PeerFrame =
  | Hello
  /** Proof of the cluster key: HMAC(HKDF(key, transcript of both hellos), sender id), hex (src/cluster/auth.ts). */
  | { readonly type: 'auth'; readonly proof: string }
  /** Sent just before closing a connection that will not be joined, so the other side can list why. */
  | { readonly type: 'refuse'; readonly reason: RefuseReason; readonly detail?: string }
  /** `lastHash`: chain hash of the sender's log at lastIndex, so a follower can tell a diverged log. */
  | { readonly type: 'heartbeat'; readonly term: number; readonly role: Role; readonly leader: string | null; readonly lastIndex: number; readonly lastTerm: number; readonly lastHash: string; readonly commit: number; readonly commitHash: string }
  | { readonly type: 'vote-request'; readonly term: number; readonly lastIndex: number; readonly lastTerm: number }
  | { readonly type: 'vote'; readonly term: number; readonly granted: boolean; readonly leader: string | null; readonly lastIndex: number; readonly lastTerm: number }
  /** Leader → follower: consecutive or not, the follower orders them. */
  | { readonly type: 'append'; readonly term: number; readonly entries: readonly IndexedEnvelope[]; readonly commit: number; readonly commitHash: string }
  /** Follower → leader: my log holds everything up to `index` on disk (fsynced); `hash` = my chain hash there. */
  | { readonly type: 'append-ack'; readonly term: number; readonly index: number; readonly hash: string }
  /** Follower → leader: send me [from, to] (to - from < MAX_BATCH, from >= 1); `prevHash` is my chain hash at from - 1. */
  | { readonly type: 'gap-request'; readonly from: number; readonly to: number; readonly prevHash: string }
  | { readonly type: 'snapshot-request' }
  /** Leader → follower: the state after applying everything up to `index` (whose entry had `lastTerm`). */
  | { readonly type: 'snapshot'; readonly term: number; readonly index: number; readonly lastTerm: number; readonly lastHash: string; readonly digest: string; readonly state: unknown }
  /** Any node → leader: a proposal (events) or a command, answered by forward-reply with the same id. */
  | { readonly type: 'forward'; readonly id: number; readonly kind: 'propose' | 'command'; readonly body: EventBody | readonly EventBody[] }
  | { readonly type: 'forward-reply'; readonly id: number; readonly ok: true; readonly outcome: unknown }
  | { readonly type: 'forward-reply'; readonly id: number; readonly ok: false; readonly error: ErrorJson }
  /** Gossip: cluster addresses of the peers the sender is joined with. */
  | { readonly type: 'peers'; readonly peers: readonly PeerAddress[] };

export interface PeerAddress { readonly nodeId: string; readonly host: string; readonly port: number }

export type PeerFrameType = PeerFrame['type'];

const ID_MAX = 128;
/** Log indices start at 1 (the topology decoder's rule); 0 means "nothing yet". */
const IDX_MIN = 0;

function leaderField(rec: Rec, path: string): string | null {
  return rec.leader === null ? null : str(rec, 'leader', path, ID_MAX);
}

export function decodeEnvelope(value: unknown, path: string, maxTerm = Number.MAX_SAFE_INTEGER): IndexedEnvelope {
  const rec = record(value, path, ['index', 'term', 'event', 'at']);
  const index = int(rec, 'index', path, 1);
  const term = int(rec, 'term', path, 0, maxTerm);
  const event = body(rec.event, `${path}.event`);
  if (rec.at === undefined) return { index, term, event };
  return { index, term, event, at: num(rec, 'at', path) };
}

/** Lenient look at a hello, used only to say *why* a peer cannot join (its version may have other fields). */
export function peekHello(value: unknown): { v?: number; nodeId?: string; cluster?: string } {
  if (typeof value !== 'object' || value === null) return {};
  const rec = value as Rec;
  if (rec.type !== 'hello') return {};
  return {
    ...(typeof rec.v === 'number' ? { v: rec.v } : {}),
    ...(typeof rec.nodeId === 'string' && rec.nodeId.length <= ID_MAX ? { nodeId: rec.nodeId } : {}),
    ...(typeof rec.cluster === 'string' && rec.cluster.length <= 64 ? { cluster: rec.cluster } : {}),
  };
}

export function decodePeerFrame(value: unknown, path = 'frame'): PeerFrame {
  const head = record(value, path, ['type', 'v', 'nodeId', 'cluster', 'incarnation', 'startedAt', 'port', 'apiPort', 'nonce', 'auth',
    'proof', 'reason', 'detail', 'term', 'role', 'leader', 'lastIndex', 'lastTerm', 'granted', 'entries', 'from', 'to', 'index',
    'digest', 'state', 'lastHash', 'prevHash', 'commit', 'commitHash', 'hash', 'id', 'kind', 'body', 'ok', 'outcome', 'error', 'peers', 'name', 'version', 'addresses']);
  const only = (keys: readonly string[]): Rec => record(head, path, ['type', ...keys]);
  switch (head.type) {
    case 'hello': {
      const r = only(['v', 'nodeId', 'cluster', 'incarnation', 'startedAt', 'port', 'apiPort', 'nonce', 'auth', 'name', 'version', 'addresses']);
      const nonce = str(r, 'nonce', path, 64);
      if (!/^[0-9a-f]{32}$/.test(nonce)) fail(`${path}.nonce`, 'expected 16 random bytes as hex');
      return {
        type: 'hello', v: int(r, 'v', path, 0, 65535), nodeId: str(r, 'nodeId', path, ID_MAX), cluster: str(r, 'cluster', path, 64),
        incarnation: int(r, 'incarnation', path), startedAt: int(r, 'startedAt', path), port: int(r, 'port', path, 0, 65535),
        apiPort: int(r, 'apiPort', path, 0, 65535), nonce, auth: bool(r, 'auth', path),
        name: str(r, 'name', path, 256), version: str(r, 'version', path, 64),
        addresses: arr(r, 'addresses', path, 64).map((a, i) => (typeof a === 'string' && a.length > 0 && a.length <= 64 ? a : fail(`${path}.addresses[${i}]`, 'expected an IP string'))),
      };
    }
    case 'auth': {
      const r = only(['proof']);
      const proof = str(r, 'proof', path, 64);
      if (!/^[0-9a-f]{64}$/.test(proof)) fail(`${path}.proof`, 'expected a hex HMAC-SHA256');
      return { type: 'auth', proof };
    }
    case 'refuse': {
      const r = only(['reason', 'detail']);
      const detail = optStr(r, 'detail', path, 512);
      const reason = oneOf(r, 'reason', path, REFUSE_REASONS);
      return detail === undefined ? { type: 'refuse', reason } : { type: 'refuse', reason, detail };
    }
    case 'heartbeat': {
      const r = only(['term', 'role', 'leader', 'lastIndex', 'lastTerm', 'lastHash', 'commit', 'commitHash']);
      return { type: 'heartbeat', term: int(r, 'term', path), role: oneOf(r, 'role', path, ROLES), leader: leaderField(r, path),
        lastIndex: int(r, 'lastIndex', path, IDX_MIN), lastTerm: int(r, 'lastTerm', path), lastHash: str(r, 'lastHash', path, 32),
        commit: int(r, 'commit', path, IDX_MIN), commitHash: str(r, 'commitHash', path, 32) };
    }
    case 'vote-request': {
      const r = only(['term', 'lastIndex', 'lastTerm']);
      return { type: 'vote-request', term: int(r, 'term', path, 1), lastIndex: int(r, 'lastIndex', path, IDX_MIN), lastTerm: int(r, 'lastTerm', path) };
    }
    case 'vote': {
      const r = only(['term', 'granted', 'leader', 'lastIndex', 'lastTerm']);
      return { type: 'vote', term: int(r, 'term', path), granted: bool(r, 'granted', path), leader: leaderField(r, path),
        lastIndex: int(r, 'lastIndex', path, IDX_MIN), lastTerm: int(r, 'lastTerm', path) };
    }
    case 'append': {
      const r = only(['term', 'entries', 'commit', 'commitHash']);
      const term = int(r, 'term', path, 1);
      const entries = arr(r, 'entries', path, MAX_BATCH).map((e, i) => decodeEnvelope(e, `${path}.entries[${i}]`, term));
      return { type: 'append', term, entries, commit: int(r, 'commit', path, IDX_MIN), commitHash: str(r, 'commitHash', path, 32) };
    }
    case 'append-ack': {
      const r = only(['term', 'index', 'hash']);
      return { type: 'append-ack', term: int(r, 'term', path, 1), index: int(r, 'index', path, IDX_MIN), hash: str(r, 'hash', path, 32) };
    }
    case 'gap-request': {
      const r = only(['from', 'to', 'prevHash']);
      const from = int(r, 'from', path, 1);
      const to = int(r, 'to', path);
      if (to < from || to - from >= MAX_BATCH) fail(`${path}.to`, `expected from <= to < from + ${MAX_BATCH}`);
      return { type: 'gap-request', from, to, prevHash: str(r, 'prevHash', path, 32) };
    }
    case 'snapshot-request':
      only([]);
      return { type: 'snapshot-request' };
    case 'snapshot': {
      const r = only(['term', 'index', 'lastTerm', 'lastHash', 'digest', 'state']);
      if (!Object.hasOwn(r, 'state')) fail(`${path}.state`, 'missing');
      return { type: 'snapshot', term: int(r, 'term', path, 1), index: int(r, 'index', path, IDX_MIN), lastTerm: int(r, 'lastTerm', path),
        lastHash: str(r, 'lastHash', path, 32), digest: str(r, 'digest', path, 128), state: r.state };
    }
    case 'forward': {
      const r = only(['id', 'kind', 'body']);
      const kind = oneOf(r, 'kind', path, ['propose', 'command'] as const);
      const raw = r.body;
      const b = Array.isArray(raw)
        ? (raw.length === 0 || raw.length > MAX_BATCH ? fail(`${path}.body`, `1..${MAX_BATCH} events`) : raw.map((e, i) => body(e, `${path}.body[${i}]`)))
        : body(raw, `${path}.body`);
      return { type: 'forward', id: int(r, 'id', path), kind, body: b };
    }
    case 'forward-reply': {
      const r = only(['id', 'ok', 'outcome', 'error']);
      const id = int(r, 'id', path);
      if (bool(r, 'ok', path)) {
        if (Object.hasOwn(r, 'error')) fail(`${path}.error`, 'not allowed when ok');
        return { type: 'forward-reply', id, ok: true, outcome: r.outcome ?? null };
      }
      if (Object.hasOwn(r, 'outcome')) fail(`${path}.outcome`, 'not allowed when not ok');
      return { type: 'forward-reply', id, ok: false, error: errorJson(r.error, `${path}.error`) };
    }
    case 'peers': {
      const r = only(['peers']);
      const peers = arr(r, 'peers', path, MAX_PEERS_LISTED).map((p, i) => {
        const q = record(p, `${path}.peers[${i}]`, ['nodeId', 'host', 'port']);
        return { nodeId: str(q, 'nodeId', path, ID_MAX), host: str(q, 'host', path, 255), port: int(q, 'port', path, 1, 65535) };
      });
      return { type: 'peers', peers };
    }
    default:
      return fail(`${path}.type`, `unknown frame type ${JSON.stringify(head.type)?.slice(0, 40) ?? 'undefined'}`);
  }
}

/** Frames allowed before the handshake completes. */
export function isHandshakeFrame(frame: PeerFrame): boolean {
  return frame.type === 'hello' || frame.type === 'auth' || frame.type === 'refuse';
}
