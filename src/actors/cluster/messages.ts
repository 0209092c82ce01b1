/** Strict decoding of the cluster actor's incoming events and request bodies. */
import { ValidationError } from '../../core/errors.js';
import { body as eventBody, fail, int, record, str } from '../../protocols/cluster-schema.js';
import { ROLES, type EventBody } from '../../protocols/peer-frames.js';
import type { ClusterActorEvent } from './machine.js';

export const CLUSTER_REQUESTS = ['propose', 'command', 'peers', 'members', 'role'] as const;

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw new ValidationError('body', 'body', (err as Error).message);
  }
}

export function decodeClusterActorEvent(raw: unknown): ClusterActorEvent {
  return guard(() => {
    const head = record(raw, 'body', ['type', 'role', 'term', 'leader', 'lastIndex', 'digest', 'members', 'heard', 'index', 'from', 'to', 'error']);
    switch (head.type) {
      case 'topology.rejected': return { type: 'topology.rejected', index: int(head, 'index', 'body') };
      case 'topology.gap': return { type: 'topology.gap', from: int(head, 'from', 'body'), to: int(head, 'to', 'body') };
      case 'cluster.role': {
        const r = head.role;
        if (typeof r !== 'string' || !(ROLES as readonly string[]).includes(r)) fail('body.role', 'unknown role');
        return { type: 'cluster.role', role: r as (typeof ROLES)[number], term: int(head, 'term', 'body'), leader: head.leader === null ? null : str(head, 'leader', 'body') };
      }
      default: return fail('body.type', `unknown event ${JSON.stringify(head.type)?.slice(0, 40)}`);
    }
  });
}

/** `propose {event}` or `propose {events: [...]}`: events from local actors, sequenced by the leader. */
export function decodePropose(raw: unknown): EventBody[] {
  return guard(() => {
    const r = record(raw, 'body', ['type', 'event', 'events']);
    if (r.event !== undefined) return [eventBody(r.event, 'body.event')];
    if (!Array.isArray(r.events) || r.events.length === 0 || r.events.length > 512) fail('body.events', 'expected 1..512 events');
    return r.events.map((e, i) => eventBody(e, `body.events[${i}]`));
  });
}

/** `command {command}`: a command for the leader (e.g. PlaceInstance). */
export function decodeCommandRequest(raw: unknown): EventBody {
  return guard(() => eventBody(record(raw, 'body', ['type', 'command']).command, 'body.command'));
}
