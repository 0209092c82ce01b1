/**
 * The runner supervisor's statechart: `running` while it follows the applied cluster log, `stopping` once
 * asked to stop (then it ignores the log; the shell stops the runners). It turns each applied event (or a
 * whole state, at start-up) into effects for the shell — start, replace, stop, peer status, task, cancel —
 * emitted as data (`runners.effects`), and counts what the runners reported. Pure: no I/O, no timers.
 *
 * It follows the committed stream by index: an entry at or below the last index seen is already reflected and
 * skipped; an entry beyond the next index means entries were missed (this actor restarted, or its mailbox was
 * refused while it was down), and so does a replaced state: it then asks the shell to read the whole state again
 * (`runners.resync`) and applies nothing past the gap until that state arrives.
 */
import { assign, emit, enqueueActions, setup } from 'xstate';
import type { ClusterEvent } from '../../../protocols/events.js';
import { reactToEvent, reactToState, type Known, type SupervisorEffect } from './reactions.js';
import type { StateView } from './state-view.js';

export interface SupervisorContext {
  readonly nodeId: string;
  readonly known: Known;
  /** Index of the last applied event seen (0 before any). */
  readonly lastIndex: number;
  readonly synced: boolean;
  readonly proposed: number;
  readonly proposeFailures: number;
  readonly lastProposeError: string | null;
  /** This node's runners as the shell last reported them (for the snapshot view: dashboard, API). */
  readonly runners: readonly RunnerSummary[];
}

export interface RunnerSummary {
  readonly instanceId: string;
  readonly runnerId: string;
  readonly rank: number;
  readonly pid: number | null;
  readonly status: string;
  readonly failures: number;
  readonly gaveUp: boolean;
}

export type SupervisorEvent =
  /** `indices`, when known, are the events' log indices (same order): they drive skipping and gap detection. */
  | { type: 'cluster.events'; events: readonly ClusterEvent[]; lastIndex?: number; indices?: readonly number[] }
  /** The applied state was replaced (a snapshot installed): what was seen by index no longer describes it. */
  | { type: 'cluster.replaced' }
  /** `authoritative`: the keeper's own state, at least as new as what was seen (it may have been replaced by a snapshot). */
  | { type: 'cluster.state'; state: StateView; lastIndex?: number; authoritative?: boolean }
  | { type: 'proposal.sent' }
  | { type: 'proposal.failed'; error: string }
  | { type: 'runners.changed'; runners: readonly RunnerSummary[] }
  | { type: 'stop' };

export interface SupervisorInput {
  readonly nodeId: string;
}

export const runnerSupervisorMachine = setup({
  types: {} as {
    context: SupervisorContext;
    events: SupervisorEvent;
    input: SupervisorInput;
    emitted: { type: 'runners.effects'; effects: readonly SupervisorEffect[] } | { type: 'runners.resync' };
  },
}).createMachine({
  id: 'runner-supervisor',
  context: ({ input }) => ({
    nodeId: input.nodeId,
    known: {},
    lastIndex: 0,
    synced: false,
    proposed: 0,
    proposeFailures: 0,
    lastProposeError: null,
    runners: [],
  }),
  initial: 'running',
  states: {
    running: {
      on: {
        'cluster.events': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            let known = context.known;
            let lastIndex = context.lastIndex;
            const effects: SupervisorEffect[] = [];
            for (const [k, e] of event.events.entries()) {
              const index = event.indices?.[k];
              if (index !== undefined && index <= lastIndex) continue; // already reflected
              // Entries missed: read the state again rather than act on a log with a hole (before the first state
              // read there is no position to miss from: that read follows anyway).
              if (index !== undefined && index > lastIndex + 1 && context.synced) {
                enqueue(emit({ type: 'runners.resync' as const }));
                break;
              }
              const r = reactToEvent(context.nodeId, known, e);
              known = r.known;
              effects.push(...r.effects);
              if (index !== undefined) lastIndex = index;
            }
            if (event.indices === undefined) lastIndex = Math.max(lastIndex, event.lastIndex ?? lastIndex);
            enqueue.assign({ known, lastIndex });
            if (effects.length) enqueue(emit({ type: 'runners.effects' as const, effects }));
          }),
        },
        'cluster.replaced': { actions: emit({ type: 'runners.resync' as const }) },
        'cluster.state': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const newer = event.authoritative === true || (event.lastIndex ?? 0) > context.lastIndex;
            const r = reactToState(context.nodeId, context.known, event.state, newer);
            enqueue.assign({
              known: r.known,
              synced: true,
              lastIndex: Math.max(context.lastIndex, event.lastIndex ?? 0),
            });
            if (r.effects.length) enqueue(emit({ type: 'runners.effects' as const, effects: r.effects }));
          }),
        },
        stop: 'stopping',
      },
    },
    stopping: {},
  },
  on: {
    'runners.changed': { actions: assign({ runners: ({ event }) => event.runners }) },
    'proposal.sent': { actions: assign({ proposed: ({ context }) => context.proposed + 1 }) },
    'proposal.failed': {
      actions: assign(({ context, event }) => ({
        proposeFailures: context.proposeFailures + 1,
        lastProposeError: event.error,
      })),
    },
  },
});
