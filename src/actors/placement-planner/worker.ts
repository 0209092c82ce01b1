/**
 * The placement-planner actor's thread entry (the shell). Answers `plan` and `preview` requests
 * (`{type, state?, request, seed?}`) with the plan/refusal JSON of docs/placement.md; without `state` it plans
 * on the live cluster state from `topology-keeper` (`placementState`). Clusters larger than
 * `poolThresholdNodes` (and all previews of them) are planned on the shared cpu pool (`placement.plan`), so the
 * actor keeps answering snapshots while a search runs; smaller ones are planned inline.
 */
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ValidationError } from '../../protocols/errors.js';
import { isRefusal } from './search/plan-result.js';
import { runPlacementTask, type PlacementTaskOutput } from './pool-task.js';
import { DEFAULT_RESERVED_PORTS, type PortRange } from './search/ports.js';
import type { Body } from '../../protocols/mailbox.js';
import { serveActor, type ActorContext } from '../../runtime/serve-actor.js';
import { placementPlannerMachine, type PlanKind, type PlanOutcome } from './machine.js';
import { checkPlannerBody, decodePlannerRequest } from './plan-request.js';

export interface PlannerOptions {
  readonly nodeId?: string;
  readonly apiPort?: number;
  /** Where instance ports are drawn from (`--instance-ports`; default ports.ts DEFAULT_INSTANCE_PORTS). */
  readonly instancePorts?: PortRange;
  /** Clusters with more nodes than this are planned on the cpu pool (default 12; 0 = always). */
  readonly poolThresholdNodes?: number;
  readonly poolTimeoutMs?: number;
}

type Ctx = ActorContext<typeof placementPlannerMachine, PlannerOptions>;

const DEFAULT_POOL_THRESHOLD_NODES = 12;

function outcomeOf(result: PlacementTaskOutput): { outcome: PlanOutcome; nodes?: readonly string[]; message?: string } {
  if ('previews' in result) return { outcome: 'previews' };
  if (isRefusal(result)) return { outcome: 'refusal', message: result.refusal.message };
  return { outcome: 'plan', nodes: result.instance.nodes };
}

async function handle(kind: PlanKind, body: Body, ctx: Ctx): Promise<PlacementTaskOutput> {
  const options = ctx.options ?? {};
  const reserved =
    options.apiPort !== undefined ? [...new Set([...DEFAULT_RESERVED_PORTS, options.apiPort])] : DEFAULT_RESERVED_PORTS;
  checkPlannerBody(body);
  // Without a state in the body, plan on the live cluster: the topology keeper's placement view.
  const live =
    body.state === undefined
      ? await ctx.request('topology-keeper', { type: 'placementState' }, { timeoutMs: 5_000 })
      : undefined;
  const ports = {
    reservedPorts: reserved,
    ...(options.instancePorts ? { portRange: options.instancePorts } : {}),
  };
  const req = decodePlannerRequest(kind, body, () => randomInt(0, 2 ** 31), ports, live);
  const usePool = req.state.nodes.length > (options.poolThresholdNodes ?? DEFAULT_POOL_THRESHOLD_NODES);
  ctx.actor.send({ type: 'planning.started', kind });
  const start = performance.now();
  let where: 'inline' | 'cpu-pool' = usePool ? 'cpu-pool' : 'inline';
  try {
    let result: PlacementTaskOutput;
    if (usePool) {
      try {
        result = await ctx.request<PlacementTaskOutput>(
          'cpu-pool',
          { type: 'run', task: 'placement.plan', input: req.input },
          { timeoutMs: options.poolTimeoutMs ?? 60_000 },
        );
      } catch (error) {
        if (error instanceof ValidationError) throw error;
        // The pool is a means, not a dependency: an embedder without it (or a pool fault) still gets a plan.
        ctx.log.warn('cpu pool failed; planning inline', { error });
        where = 'inline';
        result = runPlacementTask(req.input);
      }
    } else result = runPlacementTask(req.input);
    ctx.actor.send({
      type: 'planning.finished',
      kind,
      where,
      elapsedMs: Math.round(performance.now() - start),
      ...outcomeOf(result),
    });
    return result;
  } catch (error) {
    ctx.actor.send({
      type: 'planning.finished',
      kind,
      where,
      elapsedMs: Math.round(performance.now() - start),
      outcome: 'error',
      message: String((error as Error).message ?? error),
    });
    throw error;
  }
}

serveActor<typeof placementPlannerMachine, PlannerOptions>({
  name: 'placement-planner',
  machine: placementPlannerMachine,
  input: (options) => (options?.nodeId !== undefined ? { nodeId: options.nodeId } : {}),
  decodeEvent: (body) => {
    throw new ValidationError(
      'event',
      'type',
      `placement-planner takes requests (plan, preview), not events; got ${JSON.stringify(body.type)}`,
    );
  },
  view: (snapshot) => ({ value: snapshot.value, ...snapshot.context }),
  requests: {
    plan: (body, ctx) => handle('plan', body, ctx),
    preview: (body, ctx) => handle('preview', body, ctx),
  },
});
