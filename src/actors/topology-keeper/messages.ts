/**
 * The keeper's incoming messages (events and request bodies), one TypeBox schema each, strict like every
 * protocol decoder. Messages: `event {indexed}`, `events {entries}`, `install-snapshot {snapshot, force?}`;
 * requests listed in `KEEPER_REQUESTS` (see queries.ts and docs/state.md), of which `instance {id}` and
 * `apply {entries}` carry a body. Entries and snapshots are checked by the schemas they embed, then given the
 * rules after the check (events.ts `finishIndexedEvent`, snapshot.ts `finishSnapshot`: plan rules, digest).
 */
import { finishIndexedEvent, IndexedEvent } from '../../protocols/events.js';
import { Id } from '../../protocols/event-fields.js';
import { guarded } from '../../protocols/bounded-json.js';
import { finishSnapshot, StateSnapshotSchema } from './snapshot.js';
import { compile, Type, type Shape, type TSchema } from '../../protocols/schema-kit.js';
import type { KeeperEvent } from './machine.js';

export const KEEPER_EVENTS = ['event', 'events', 'install-snapshot'] as const;
export const KEEPER_REQUESTS = [
  'state',
  'topology',
  'instances',
  'instance',
  'placementState',
  'toReplace',
  'state-snapshot',
  'apply',
  'install-snapshot',
] as const;

/** Most entries one message may carry (the cluster sends bounded batches). */
export const MAX_BATCH = 1000;

const CLOSED = { additionalProperties: false } as const;
const message = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, CLOSED);
const Entries = Type.Array(IndexedEvent, { maxItems: MAX_BATCH });

export const KeeperMessages = {
  event: message('event', { indexed: IndexedEvent }),
  events: message('events', { entries: Entries }),
  'install-snapshot': message('install-snapshot', {
    snapshot: StateSnapshotSchema,
    force: Type.Optional(Type.Boolean()),
  }),
};
export const KeeperMessage = Type.Union(Object.values(KeeperMessages) as TSchema[] as [TSchema]);
export type KeeperMessage = {
  [K in keyof typeof KeeperMessages]: Shape<(typeof KeeperMessages)[K]>;
}[keyof typeof KeeperMessages];
/** Request bodies: `instance {id}`; `apply {entries}` carries the same fields as `events`. */
export const KeeperRequests = {
  instance: message('instance', { id: Id }),
  apply: message('apply', { entries: Entries }),
};

const messageCodec = compile(KeeperMessage, 'event', 'body');
const instanceCodec = compile(KeeperRequests.instance, 'body', 'body');
const applyCodec = compile(KeeperRequests.apply, 'event', 'body');

const entries = (list: Shape<typeof Entries>): KeeperEvent => ({
  type: 'events',
  entries: list.map((e, i) => finishIndexedEvent(e, `body.entries[${i}]`)),
});

export function decodeKeeperEvent(body: unknown): KeeperEvent {
  const m = messageCodec.decode(body) as KeeperMessage;
  return guarded('event', (): KeeperEvent => {
    switch (m.type) {
      case 'event':
        return { type: 'event', indexed: finishIndexedEvent(m.indexed, 'body.indexed') };
      case 'events':
        return entries(m.entries);
      case 'install-snapshot': {
        const snapshot = finishSnapshot(m.snapshot, 'body.snapshot');
        return m.force === undefined
          ? { type: 'install-snapshot', snapshot }
          : { type: 'install-snapshot', snapshot, force: m.force };
      }
    }
  });
}

export function decodeInstanceRequest(body: unknown): { id: string } {
  return { id: instanceCodec.decode(body).id };
}

/** `apply {entries}`; any other body is read as a keeper event (as before: `apply` may carry one). */
export function decodeApplyRequest(body: unknown): KeeperEvent {
  if (typeof body === 'object' && body !== null && (body as { type?: unknown }).type === 'apply')
    return entries(applyCodec.decode(body).entries);
  return decodeKeeperEvent(body);
}
