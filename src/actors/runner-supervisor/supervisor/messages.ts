/**
 * Messages the runner supervisor accepts, one TypeBox schema each (ValidationError on anything else), both sent by
 * the node's `node-events` service (start-node.ts) as the cluster thread applies the log:
 * - `{type:'events', entries}`: applied log entries, followed by index (machine.ts);
 * - `{type:'state-replaced'}`: the applied state was replaced (a snapshot installed): read it again.
 * Events are checked by the schemas they embed, then given the rules after the check (events.ts `finishIndexedEvent`).
 * The whole state is not a message: the supervisor reads it from the keeper (state-view.ts).
 */
import { finishIndexedEvent, IndexedEvent } from '../../../protocols/events.js';
import { compile, Type, type Shape, type TSchema } from '../../../protocols/schema-kit.js';
import type { SupervisorEvent } from './machine.js';

const W = 'event';
const CLOSED = { additionalProperties: false } as const;
const MAX_ENTRIES = 10_000;
const message = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, CLOSED);
export const SupervisorMessages = {
  events: message('events', { entries: Type.Array(IndexedEvent, { maxItems: MAX_ENTRIES }) }),
  'state-replaced': message('state-replaced', {}),
};
export const SupervisorMessage = Type.Union(Object.values(SupervisorMessages) as TSchema[] as [TSchema]);
export type SupervisorMessage = {
  [K in keyof typeof SupervisorMessages]: Shape<(typeof SupervisorMessages)[K]>;
}[keyof typeof SupervisorMessages];

const messageCodec = compile(SupervisorMessage, W, 'body');

export function decodeSupervisorMessage(body: unknown): SupervisorEvent {
  const m = messageCodec.decode(body) as SupervisorMessage;
  switch (m.type) {
    case 'events': {
      const list = m.entries.map((e, i) => finishIndexedEvent(e, `body.entries[${i}]`));
      return {
        type: 'cluster.events',
        events: list.map((e) => e.event),
        lastIndex: Math.max(0, ...list.map((e) => e.index)),
        indices: list.map((e) => e.index),
      };
    }
    case 'state-replaced':
      return { type: 'cluster.replaced' };
  }
}
