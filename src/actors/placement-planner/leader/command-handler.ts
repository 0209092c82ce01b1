/**
 * The leader's command handler (the `commands` host service the cluster actor asks): turns a command into the
 * events the leader appends, or a TorusError the caller receives — a placement refusal is an answer with its
 * reasons, never a log line on the leader. Plans come from the placement planner on the leader's own state.
 */
import { randomUUID } from 'node:crypto';
import { TorusError, ValidationError } from '../../../protocols/errors.js';
import type { PlacementTaskOutput, Refusal } from '../index.js';
import { holdsRunners, ineligibleNodes, withoutNodes, type Exclusion } from './runner-eligibility.js';
import { toPlacementState } from '../../topology-keeper/placement-state.js';
import { withArtifactHoldings } from './artifact-placement.js';
import { modelBytesOf, modelRecordFor, resolveModelWorkload } from '../search/model-workload.js';
import { checkPinnedNodesKnown } from '../search/pinned-placement.js';
import { keptStagesOf, keptStagesReason } from './kept-stages-request.js';
import type { KeepStages } from '../search/placement-request.js';
import { DEFAULT_MAX_INSTANCES } from '../../../protocols/exec-policy.js';
import { createLogger } from '../../../runtime/log.js';
import type { ClusterState } from '../../topology-keeper/state.js';
import { jobRestart } from '../../topology-keeper/restart-rule.js';
import {
  decodeCommand,
  type ClusterEvent,
  type Command,
  type InstancePlan,
  type WorkloadSpec,
} from '../../../protocols/events.js';
import type { Body } from '../../../protocols/mailbox.js';
import type { Runtime } from '../../../runtime/runtime.js';
import { compactConstraints, planRequestFor } from './command-plan-request.js';

export interface CommandOutcome {
  readonly events: readonly ClusterEvent[];
  readonly outcome?: unknown;
}

const PLAN_TIMEOUT_MS = 60_000;
const log = createLogger({ component: 'commands' });

export interface CommandHandlerOptions {
  /** Live instances the cluster holds at most (`--max-instances`); more are refused with TORUS_QUOTA_EXCEEDED. */
  readonly maxInstances?: number;
}

export class CommandHandler {
  readonly #runtime: Runtime;
  readonly #maxInstances: number;
  #atLimit = false;

  constructor(runtime: Runtime, options: CommandHandlerOptions = {}) {
    this.#runtime = runtime;
    this.#maxInstances = options.maxInstances ?? DEFAULT_MAX_INSTANCES;
  }

  /** Refuses a new instance when the cluster already holds --max-instances live ones (logged once per episode). */
  #checkQuota(state: ClusterState): void {
    const live = Object.values(state.instances).filter(holdsRunners).length;
    if (live < this.#maxInstances) {
      this.#atLimit = false;
      return;
    }
    const message = `the cluster holds ${live} live instances, its limit (--max-instances=${this.#maxInstances}); delete one first`;
    if (!this.#atLimit)
      log.warn('instance quota reached; new instances are refused', { live, maxInstances: this.#maxInstances });
    this.#atLimit = true;
    throw new TorusError('TORUS_QUOTA_EXCEEDED', message, { quota: 'max-instances', limit: this.#maxInstances, live });
  }

  /** The service entry: `{type: 'handle-command', command, state}` → `{events, outcome?}`. */
  async serve(body: Body): Promise<CommandOutcome> {
    if (body.type !== 'handle-command') throw new ValidationError('body', 'type', 'expected handle-command');
    const command = decodeCommand(body.command);
    const state = body.state as ClusterState;
    if (!state || typeof state !== 'object' || typeof state.instances !== 'object')
      throw new ValidationError('body', 'state', 'expected the cluster state');
    return this.handle(command, state);
  }

  async handle(command: Command, state: ClusterState): Promise<CommandOutcome> {
    switch (command.type) {
      case 'PlaceInstance': {
        this.#checkQuota(state);
        if (command.nodes) checkPinnedNodesKnown(Object.keys(state.nodes), command.nodes);
        const plan = await this.#plan(state, planRequestFor(command.workload, command), command.workload);
        const id = command.instanceId ?? plan.id;
        if (Object.hasOwn(state.instances, id))
          throw new TorusError('TORUS_INSTANCE_EXISTS', `instance ${id} already exists`, { instanceId: id });
        const instance: InstancePlan = { ...plan, id };
        const constraints = compactConstraints(command);
        return {
          events: [
            {
              type: 'InstanceCreated',
              instance,
              workload: command.workload,
              ...constraints,
              ...(command.nodes ? { pinned: true as const } : {}),
            },
          ],
          outcome: { instanceId: id, nodes: instance.nodes },
        };
      }
      case 'CreateInstance': {
        if (Object.hasOwn(state.instances, command.instance.id))
          throw new TorusError('TORUS_INSTANCE_EXISTS', `instance ${command.instance.id} already exists`, {
            instanceId: command.instance.id,
          });
        const missing = command.instance.nodes.filter((n) => !Object.hasOwn(state.nodes, n));
        if (missing.length)
          throw new TorusError('TORUS_NODE_UNKNOWN', `nodes not in the cluster: ${missing.join(', ')}`, { missing });
        this.#checkQuota(state);
        // A given plan is not re-planned, but it may not name a node that would refuse its runner.
        const refusing = ineligibleNodes(state, command.workload).filter((e) =>
          command.instance.nodes.includes(e.node),
        );
        if (refusing.length) throw refusedOn(refusing, 'the plan names nodes that refuse this workload');
        return {
          events: [{ type: 'InstanceCreated', instance: command.instance, workload: command.workload }],
          outcome: { instanceId: command.instance.id },
        };
      }
      case 'DeleteInstance': {
        this.#instance(state, command.instanceId);
        return {
          events: [{ type: 'InstanceDeleted', instanceId: command.instanceId, reason: command.reason ?? 'deleted' }],
          outcome: { instanceId: command.instanceId },
        };
      }
      case 'ReplaceInstance': {
        const record = this.#instance(state, command.instanceId);
        const reason = command.reason ?? record.reason ?? 're-placement requested';
        const job = jobRestart(record, reason);
        if (job.kind === 'nothing')
          return { events: [], outcome: { instanceId: command.instanceId, unchanged: record.status } };
        if (job.kind === 'fail')
          return {
            events: [{ type: 'InstanceFailed', instanceId: command.instanceId, reason: job.reason }],
            outcome: { instanceId: command.instanceId, failed: true },
          };
        // A pinned instance runs where it was pinned or not at all: a node of it that left is not replaced by
        // another the user did not choose (docs/placement.md, "Pinned placement").
        const gone = record.pinned ? record.plan.nodes.filter((n) => !Object.hasOwn(state.nodes, n)) : [];
        if (gone.length > 0)
          return {
            events: [
              {
                type: 'InstanceFailed',
                instanceId: command.instanceId,
                reason: pinnedGoneReason(gone, reason),
                final: true,
              },
            ],
            outcome: { instanceId: command.instanceId, failed: true },
          };
        try {
          // The original constraints still hold: a re-placement may not drop a required node or go below minNodes,
          // and it optimises what the placement did (a throughput pipeline stays one).
          const request = planRequestFor(record.workload, {
            sharding: record.plan.sharding,
            backend: record.plan.backend,
            ...compactConstraints(record),
            ...(record.pinned ? { nodes: record.plan.nodes } : {}),
          });
          const keep = keptStagesOf(record, state);
          const kept =
            keep && (await this.#planKeepingStages(state, request, record.workload, command.instanceId, keep));
          const plan = kept || (await this.#plan(state, request, record.workload, command.instanceId));
          const instance: InstancePlan = { ...plan, id: command.instanceId };
          const what = job.kind === 'restart' ? `restart ${job.restarts} of ${job.max}, ` : '';
          const done = keep && kept ? keptStagesReason(keep, instance) : `re-placed on ${instance.nodes.join(', ')}`;
          return {
            events: [
              {
                type: 'InstanceReplaced',
                instance,
                reason: `${what}${done}: ${reason}`.slice(0, 1024),
                ...(job.kind === 'restart' ? { restarts: job.restarts } : {}),
              },
            ],
            outcome: { instanceId: command.instanceId, nodes: instance.nodes },
          };
        } catch (error) {
          if (!(error instanceof TorusError) || error.code !== 'TORUS_PLACEMENT_REFUSED') throw error;
          // final: a restartable job would otherwise wait in `restarting` for the next trigger (NodeJoined).
          return {
            events: [
              {
                type: 'InstanceFailed',
                instanceId: command.instanceId,
                reason: `cannot re-place (${reason}): ${error.message}`.slice(0, 1024),
                final: true,
              },
            ],
            outcome: { instanceId: command.instanceId, failed: true },
          };
        }
      }
      case 'SubmitTask': {
        this.#instance(state, command.instanceId);
        const taskId = command.taskId ?? randomUUID();
        if (Object.hasOwn(state.tasks, taskId)) return { events: [], outcome: { taskId, duplicate: true } }; // a task sent twice runs once
        return {
          events: [
            {
              type: 'TaskCreated',
              taskId,
              instanceId: command.instanceId,
              kind: command.kind,
              ...(command.params !== undefined ? { params: command.params } : {}),
              ...(command.timeoutMs !== undefined ? { timeoutMs: command.timeoutMs } : {}),
            },
          ],
          outcome: { taskId },
        };
      }
      case 'CancelTask': {
        if (!Object.hasOwn(state.tasks, command.taskId))
          throw new TorusError('TORUS_API_NOT_FOUND', `no task ${command.taskId}`, { taskId: command.taskId });
        return {
          events: [
            {
              type: 'TaskStatusChanged',
              taskId: command.taskId,
              status: 'cancelled',
              error: command.reason ?? 'cancelled',
            },
          ],
          outcome: { taskId: command.taskId },
        };
      }
    }
  }

  #instance(state: ClusterState, id: string): ClusterState['instances'][string] {
    const record = Object.hasOwn(state.instances, id) ? state.instances[id] : undefined;
    if (!record) throw new TorusError('TORUS_INSTANCE_UNKNOWN', `no instance ${id}`, { instanceId: id });
    return record;
  }

  /**
   * A model pipeline that lost nodes: survivors keep their stages, spares take the lost ones (kept-stages.ts).
   * Undefined when no spare fits: the caller then plans afresh, and the log says why.
   */
  async #planKeepingStages(
    state: ClusterState,
    request: Record<string, unknown>,
    workload: WorkloadSpec,
    instanceId: string,
    keepStages: KeepStages,
  ): Promise<InstancePlan | undefined> {
    try {
      return await this.#plan(state, { ...request, keepStages }, workload, instanceId);
    } catch (error) {
      if (!(error instanceof TorusError) || error.code !== 'TORUS_PLACEMENT_REFUSED') throw error;
      log.info('cannot keep the surviving stages; planning afresh', { instance: instanceId, why: error.message });
      return undefined;
    }
  }

  /** Plans on the nodes that can hold this workload's runners; a refusal names the nodes left out and why. */
  async #plan(
    state: ClusterState,
    request: Record<string, unknown>,
    workload: WorkloadSpec,
    replacing?: string,
  ): Promise<InstancePlan> {
    // The workload arrives with the model's sizes filled in (the API resolved them); checked again against the
    // leader's record, and the planner weighs each stage by the record's real bytes. A re-placement whose model
    // lost its last holder plans by the sizes the workload carries (its runners say what they lack).
    if (workload.model && (replacing === undefined || state.artifacts?.[workload.model]?.model)) {
      resolveModelWorkload(workload, state.artifacts);
      const modelBytes = modelBytesOf(modelRecordFor(state.artifacts, workload.model));
      request = { ...request, workload: { ...(request.workload as Record<string, unknown>), modelBytes } };
    }
    const excluded = ineligibleNodes(state, workload, replacing);
    const pinned = request.nodes as readonly string[] | undefined;
    const required = pinned ?? (request.requiredNodes as readonly string[] | undefined) ?? [];
    const requiredOut = excluded.filter((e) => required.includes(e.node));
    if (requiredOut.length)
      throw refusedOn(requiredOut, `a ${pinned ? 'pinned' : 'required'} node cannot run this workload`);
    if (excluded.length === Object.keys(state.nodes).length && excluded.length > 0)
      throw refusedOn(excluded, 'no node can run this workload');
    let placementState = withoutNodes(toPlacementState(state), excluded);
    if (workload.artifacts?.length) {
      // The holders of the workload's artifacts count as having it cached; the plan says what each choice moves.
      const held = withArtifactHoldings(placementState, state, workload.id, workload.artifacts);
      placementState = held.placement;
      request = {
        ...request,
        workload: { ...(request.workload as Record<string, unknown>), artifactBytes: held.artifactBytes },
      };
    }
    const result = await this.#runtime.request<PlacementTaskOutput>(
      'placement-planner',
      { type: 'plan', state: placementState, request },
      { timeoutMs: PLAN_TIMEOUT_MS },
    );
    if ('refusal' in result) {
      const refusal: Refusal = result.refusal;
      const left = excluded.length ? `; left out: ${excluded.map((e) => e.reason).join('; ')}` : '';
      throw new TorusError('TORUS_PLACEMENT_REFUSED', `${refusal.message}${left}`.slice(0, 4000), {
        kind: refusal.kind,
        explanation: refusal.explanation,
        ...(excluded.length ? { excluded } : {}),
      });
    }
    if (!('instance' in result)) throw new TorusError('TORUS_INTERNAL', 'the planner answered without a plan');
    return result.instance as InstancePlan;
  }
}

function pinnedGoneReason(gone: readonly string[], reason: string): string {
  const which = gone.length > 1 ? `pinned nodes ${gone.join(', ')} left` : `pinned node ${gone[0]} left`;
  const back = gone.length > 1 ? 'they are' : 'it is';
  return `${which}; a pinned placement is not moved to other nodes (place it again once ${back} back): ${reason}`.slice(
    0,
    1024,
  );
}

function refusedOn(excluded: readonly Exclusion[], what: string): TorusError {
  return new TorusError(
    'TORUS_PLACEMENT_REFUSED',
    `${what}: ${excluded.map((e) => e.reason).join('; ')}`.slice(0, 4000),
    { kind: 'nodes', excluded },
  );
}
