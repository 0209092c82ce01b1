/**
 * The topology keeper's statechart: every input goes through the ordered buffer (actors/topology-keeper) that holds the
 * replicated state. `live` = nothing waiting; `waiting` = entries are held behind a gap. The outcome of each input
 * is kept in `lastEffects` and announced as emits (data for the shell, which logs rejections and asks for missing
 * ranges): `topology.rejected`, `topology.gap`, `topology.changed`. Pure: no I/O, no clock.
 */
import { assign, enqueueActions, not, setup } from 'xstate';
import type { IndexedEvent } from '../../protocols/events.js';
import {
  createBuffer,
  installSnapshot,
  offerEvents,
  type BufferEffect,
  type BufferStep,
  type EventBuffer,
} from './event-buffer.js';
import type { StateSnapshot } from './snapshot.js';
import type { ClusterState } from './state.js';

export type KeeperEvent =
  | { readonly type: 'event'; readonly indexed: IndexedEvent }
  | { readonly type: 'events'; readonly entries: readonly IndexedEvent[] }
  | { readonly type: 'install-snapshot'; readonly snapshot: StateSnapshot; readonly force?: boolean };

export type Rejection = Extract<BufferEffect, { kind: 'rejected' }>;

export type KeeperEmitted =
  | { readonly type: 'topology.rejected'; readonly rejection: Rejection }
  | { readonly type: 'topology.gap'; readonly from: number; readonly to: number }
  | { readonly type: 'topology.changed'; readonly lastIndex: number; readonly applied: readonly IndexedEvent[] };

export interface KeeperContext {
  readonly buffer: EventBuffer;
  /** effects of the last input, in order (the `apply` request returns them) */
  readonly lastEffects: readonly BufferEffect[];
  readonly rejectedCount: number;
  readonly lastRejection?: Rejection;
}

export interface KeeperInput {
  readonly state?: ClusterState;
}

function step(buffer: EventBuffer, event: KeeperEvent): BufferStep {
  switch (event.type) {
    case 'event':
      return offerEvents(buffer, [event.indexed]);
    case 'events':
      return offerEvents(buffer, event.entries);
    case 'install-snapshot':
      return installSnapshot(buffer, event.snapshot, { force: event.force ?? false });
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

const isRejection = (e: BufferEffect): e is Rejection => e.kind === 'rejected';

export const topologyKeeperMachine = setup({
  types: {} as { context: KeeperContext; events: KeeperEvent; input: KeeperInput | undefined; emitted: KeeperEmitted },
  actions: {
    offer: assign(({ context, event }) => {
      const { buffer, effects } = step(context.buffer, event);
      const rejected = effects.filter(isRejection);
      return {
        buffer,
        lastEffects: effects,
        rejectedCount: context.rejectedCount + rejected.length,
        lastRejection: rejected.at(-1) ?? context.lastRejection,
      };
    }),
    announce: enqueueActions(({ context, enqueue }) => {
      for (const e of context.lastEffects) {
        if (e.kind === 'rejected') enqueue.emit({ type: 'topology.rejected', rejection: e });
        else if (e.kind === 'gap') enqueue.emit({ type: 'topology.gap', from: e.from, to: e.to });
      }
      if (context.lastEffects.some((e) => e.kind === 'applied' || e.kind === 'installed')) {
        const applied = context.lastEffects.flatMap((e) => (e.kind === 'applied' ? [e.entry] : []));
        enqueue.emit({ type: 'topology.changed', lastIndex: context.buffer.state.lastIndex, applied });
      }
    }),
  },
  guards: {
    hasPending: ({ context }) => context.buffer.pending.length > 0,
  },
}).createMachine({
  id: 'topology-keeper',
  context: ({ input }) => ({ buffer: createBuffer(input?.state), lastEffects: [], rejectedCount: 0 }),
  initial: 'live',
  on: {
    event: { actions: ['offer', 'announce'] },
    events: { actions: ['offer', 'announce'] },
    'install-snapshot': { actions: ['offer', 'announce'] },
  },
  states: {
    live: { always: { guard: 'hasPending', target: 'waiting' } },
    waiting: { always: { guard: not('hasPending'), target: 'live' } },
  },
});
