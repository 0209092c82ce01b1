import { assign, setup } from 'xstate';

/**
 * The placement planner's statechart: `idle` until a plan or preview request arrives, `planning` while at least
 * one is in flight. Planning itself is a pure function run by the shell (inline, or on the cpu pool for large
 * clusters); the machine only records what happened, so its snapshot shows the planner's activity.
 */
export type PlanKind = 'plan' | 'preview';
export type PlanOutcome = 'plan' | 'refusal' | 'previews' | 'error';

export interface LastPlanning {
  readonly kind: PlanKind;
  readonly outcome: PlanOutcome;
  /** Nodes of the plan, in rank order (plans only). */
  readonly nodes?: readonly string[];
  /** Refusal or error message. */
  readonly message?: string;
  readonly where: 'inline' | 'cpu-pool';
  readonly elapsedMs: number;
}

export interface PlannerContext {
  readonly nodeId: string | null;
  readonly inFlight: number;
  readonly plans: number;
  readonly refusals: number;
  readonly previews: number;
  readonly errors: number;
  readonly last: LastPlanning | null;
}

export type PlannerEvent =
  | { type: 'planning.started'; kind: PlanKind }
  | ({ type: 'planning.finished' } & LastPlanning);

export interface PlannerInput {
  readonly nodeId?: string;
}

export const placementPlannerMachine = setup({
  types: {} as { context: PlannerContext; events: PlannerEvent; input: PlannerInput | undefined },
  guards: { lastInFlight: ({ context }) => context.inFlight <= 1 },
  actions: {
    started: assign({ inFlight: ({ context }) => context.inFlight + 1 }),
    finished: assign(({ context, event }) => {
      if (event.type !== 'planning.finished') return {};
      const { type: _type, ...last } = event;
      return {
        inFlight: Math.max(0, context.inFlight - 1),
        plans: context.plans + (event.outcome === 'plan' ? 1 : 0),
        refusals: context.refusals + (event.outcome === 'refusal' ? 1 : 0),
        previews: context.previews + (event.outcome === 'previews' ? 1 : 0),
        errors: context.errors + (event.outcome === 'error' ? 1 : 0),
        last,
      };
    }),
  },
}).createMachine({
  id: 'placement-planner',
  context: ({ input }) => ({
    nodeId: input?.nodeId ?? null,
    inFlight: 0,
    plans: 0,
    refusals: 0,
    previews: 0,
    errors: 0,
    last: null,
  }),
  initial: 'idle',
  states: {
    idle: {
      on: { 'planning.started': { target: 'planning', actions: 'started' } },
    },
    planning: {
      on: {
        'planning.started': { actions: 'started' },
        'planning.finished': [{ guard: 'lastInFlight', target: 'idle', actions: 'finished' }, { actions: 'finished' }],
      },
    },
  },
});
