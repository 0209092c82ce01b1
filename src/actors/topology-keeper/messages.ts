/**
 * Decoding of the keeper's incoming messages (events and request bodies), strict like every protocol decoder.
 * Messages: `event {indexed}`, `events {entries}`, `install-snapshot {snapshot, force?}`; requests listed in
 * `KEEPER_REQUESTS` (see queries.ts and docs/state.md).
 */
import { decodeIndexedEvent } from '../../protocols/events.js';
import { decodeSnapshot } from '../../core/topology/snapshot.js';
import { arr, bool, guarded, id, obj, oneOf, opt } from '../../core/topology/reader.js';
import type { KeeperEvent } from './machine.js';

export const KEEPER_EVENTS = ['event', 'events', 'install-snapshot'] as const;
export const KEEPER_REQUESTS = ['state', 'topology', 'instances', 'instance', 'placementState', 'toReplace', 'state-snapshot', 'apply', 'install-snapshot'] as const;

/** Most entries one message may carry (the cluster sends bounded batches). */
export const MAX_BATCH = 1000;

const entry = (v: unknown, p: string) => decodeIndexedEvent(v, p);

export function decodeKeeperEvent(body: unknown): KeeperEvent {
  return guarded('event', () => {
    const type = oneOf('event', obj('event', body, 'body', ['type'], ['indexed', 'entries', 'snapshot', 'force']).type, 'body.type', KEEPER_EVENTS);
    switch (type) {
      case 'event': {
        const o = obj('event', body, 'body', ['type', 'indexed']);
        return { type, indexed: decodeIndexedEvent(o.indexed, 'body.indexed') };
      }
      case 'events': {
        const o = obj('event', body, 'body', ['type', 'entries']);
        return { type, entries: arr('event', o.entries, 'body.entries', entry, MAX_BATCH) };
      }
      case 'install-snapshot': {
        const o = obj('event', body, 'body', ['type', 'snapshot'], ['force']);
        const force = opt(o.force, (x) => bool('event', x, 'body.force'));
        return force === undefined ? { type, snapshot: decodeSnapshot(o.snapshot) } : { type, snapshot: decodeSnapshot(o.snapshot), force };
      }
    }
  });
}

export function decodeInstanceRequest(body: unknown): { id: string } {
  return guarded('body', () => {
    const o = obj('body', body, 'body', ['type', 'id']);
    return { id: id('body', o.id, 'body.id') };
  });
}

/** `apply` carries the same fields as `events`. */
export function decodeApplyRequest(body: unknown): KeeperEvent {
  if (typeof body === 'object' && body !== null && (body as { type?: unknown }).type === 'apply') {
    return decodeKeeperEvent({ ...body, type: 'events' });
  }
  return decodeKeeperEvent(body);
}
