/**
 * Worker entry of the runner supervisor (the shell). Owns this node's RunnerManager; feeds it the effects
 * the machine derives from the applied cluster log; proposes what the runners report (RunnerStatusChanged,
 * TaskStatusChanged, InstanceFailed) to the cluster in order, retrying while there is no leader; catches up
 * from the topology keeper's state at start. Stopping the actor stops every runner (graceful → SIGTERM →
 * SIGKILL), so no runner outlives its node.
 *
 * It follows the committed stream by index (machine.ts): the state is read at start, and again only when the machine
 * saw entries missing or the state replaced. Finished runs are collected (runners/run-collector.ts) every
 * collectEveryMs from a fresh read of the state, and at once when the data dir's disk fills (checked every second).
 *
 * Options: nodeId, dataDir (required); proposeTo (default 'cluster'), stateFrom (default 'topology-keeper'),
 * deadlines, policy, cancelTimeoutMs, runnerEnv, allowExec (default false), maxRunners, logRotation, runRetention,
 * collectEveryMs.
 */
import { asTorusError } from '../../protocols/errors.js';
import type { RestartPolicy } from '../../runtime/restart-policy.js';
import type { ExecPolicy } from '../../protocols/exec-policy.js';
import type { ClusterEvent } from '../../protocols/events.js';
import { serveActor } from '../../runtime/serve-actor.js';
import { RunnerManager } from './supervisor/runner-manager.js';
import { LogDrops } from './supervisor/log-drops.js';
import { diskUsagePercent, RunCollector } from './supervisor/run-collector.js';
import type { LogRotation } from '../../protocols/log-rotation.js';
import { DEFAULT_RUN_RETENTION, type RunRetention } from '../../protocols/run-retention.js';
import type { StateView } from './supervisor/state-view.js';
import type { ShutdownDeadlines } from './supervisor/runner-process.js';
import { runnerSupervisorMachine, type RunnerSummary } from './supervisor/machine.js';
import { ARTIFACTS_SERVICE, awaitArtifacts } from './supervisor/await-artifacts.js';
import { decodeSupervisorMessage } from './supervisor/messages.js';
import { decodeStateView } from './supervisor/state-view.js';
import { EffectQueue } from './supervisor/effect-queue.js';
import { ProposalQueue } from './supervisor/proposal-queue.js';
import type { SupervisorEffect } from './supervisor/reactions.js';

interface SupervisorOptions {
  readonly nodeId: string;
  readonly dataDir: string;
  readonly proposeTo?: string;
  readonly stateFrom?: string;
  readonly deadlines?: ShutdownDeadlines;
  readonly policy?: RestartPolicy;
  readonly cancelTimeoutMs?: number;
  /** Data-plane key for the ring sockets of this node's runners (null/absent: open mode). */
  readonly dataKey?: string | null;
  readonly runnerEnv?: Readonly<Record<string, string>>;
  /** `exec` commands this node runs (default false: none), enforced at spawn time. */
  readonly allowExec?: ExecPolicy;
  /** Runners held at once (default 8). */
  readonly maxRunners?: number;
  /** How each runner's stdout and stderr rotate (default 10 × 10 MiB). */
  readonly logRotation?: LogRotation;
  /** When finished runs' directories are removed (default: keep 50, a week, at once above 80 % disk use). */
  readonly runRetention?: RunRetention;
  /** A retention pass at most this often (ms, default 10 s); the disk is checked every second. */
  readonly collectEveryMs?: number;
}

/** The node's own stop deadline must cover these: 2 + 1.5 + 1 s. */
const NODE_DEADLINES: ShutdownDeadlines = { gracefulMs: 2000, termMs: 1500, killMs: 1000 };
const MAX_QUEUED_PROPOSALS = 10_000;
/** The manager of this thread's actor, for request handlers (one actor per worker thread). */
const managers = new Map<string, RunnerManager>();
const logDrops = new Map<string, LogDrops>();

serveActor<typeof runnerSupervisorMachine, SupervisorOptions>({
  name: 'runner-supervisor',
  machine: runnerSupervisorMachine,
  input: (options) => ({ nodeId: options.nodeId }),
  decodeEvent: (body) => decodeSupervisorMessage(body),
  view: (snapshot) => {
    const { known, ...rest } = snapshot.context;
    return { value: snapshot.value, ...rest, instances: Object.keys(known).sort() };
  },
  requests: {
    runners: (_body, ctx) => managerOf(ctx.name)?.runners() ?? [],
    // Runner output lost to write errors, bytes per stream (/metrics: torus_runner_log_dropped_bytes_total).
    'log-drops': (_body, ctx) => logDrops.get(ctx.name)?.totals() ?? { stdout: 0, stderr: 0 },
  },
  setup: (ctx) => {
    const { options, actor, log } = ctx;
    const proposeTo = options.proposeTo ?? 'cluster';
    // Each proposal carries what queued while the one before was in flight (proposal-queue.ts).
    const proposals = new ProposalQueue<ClusterEvent>({
      send: async (events) => {
        await ctx.request(
          proposeTo,
          { type: 'propose', events: events as unknown as Record<string, unknown>[] },
          { timeoutMs: 5000 },
        );
      },
      stopping: () => ctx.stopping,
      onSent: (count) => {
        for (let i = 0; i < count; i++) actor.send({ type: 'proposal.sent' });
      },
      onFailed: (err) => actor.send({ type: 'proposal.failed', error: asTorusError(err).message }),
      maxQueued: MAX_QUEUED_PROPOSALS,
    });
    const drops = new LogDrops(log);
    logDrops.set(ctx.name, drops);
    const manager = new RunnerManager({
      nodeId: options.nodeId,
      dataDir: options.dataDir,
      deadlines: options.deadlines ?? NODE_DEADLINES,
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.cancelTimeoutMs !== undefined ? { cancelTimeoutMs: options.cancelTimeoutMs } : {}),
      ...(options.runnerEnv ? { runnerEnv: options.runnerEnv } : {}),
      allowExec: options.allowExec ?? false,
      ...(options.maxRunners !== undefined ? { maxRunners: options.maxRunners } : {}),
      ...(options.logRotation ? { logRotation: options.logRotation } : {}),
      onLimit: (message) => log.warn('runner quota reached; further runners are refused', { message }),
      onLogDropped: (runnerId, stream, bytes, error) => drops.note(runnerId, stream, bytes, error),
      ...(options.dataKey ? { dataKey: options.dataKey } : {}),
      onEvent: (event) => {
        proposals.push(event);
        actor.send({ type: 'runners.changed', runners: summaries(manager) });
      },
      onSpawn: (runnerId, pid) => log.info('runner started', { runnerId, pid }),
      awaitArtifacts: (instance, cancelled) =>
        awaitArtifacts(instance, options.nodeId, cancelled, (body) =>
          ctx.request(ARTIFACTS_SERVICE, body, { timeoutMs: 10_000 }),
        ),
    });
    managers.set(ctx.name, manager);
    // Effects run one after another, in log order: a stop finishes before a start of the same instance.
    const effects = new EffectQueue(
      (effect) => perform(manager, effect),
      (effect, error) => log.error('runner effect failed', { effect: effect.type, error }),
    );
    const sub = actor.on('runners.effects', (event) => {
      for (const effect of event.effects) effects.push(effect);
    });
    const from = options.stateFrom ?? 'topology-keeper';
    const readState = async (): Promise<{ view: StateView; lastIndex: number }> => {
      const answer = await ctx.request<{ state: unknown; lastIndex?: number }>(
        from,
        { type: 'state' },
        { timeoutMs: 5000 },
      );
      return { view: decodeStateView(answer.state), lastIndex: answer.lastIndex ?? 0 };
    };
    // One read at a time; a resync asked for while one runs is served by another read right after it.
    let reading = false;
    let readAgain = false;
    let retryTimer: NodeJS.Timeout | undefined;
    const resync = async (): Promise<void> => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          const { view, lastIndex } = await readState();
          // The keeper's own state is authoritative: it is the applied copy, at least as new as any entry seen.
          actor.send({ type: 'cluster.state', state: view, authoritative: true, lastIndex });
        } while (readAgain && !ctx.stopping);
      } catch (err) {
        log.debug('state read failed; trying again', { error: err });
        if (!ctx.stopping) retryTimer = setTimeout(() => void resync(), 1000);
      } finally {
        reading = false;
      }
    };
    const resyncSub = actor.on('runners.resync', () => void resync());
    void resync();

    // Finished runs are collected only from a state this node has read: before it, every directory may be live.
    const retention = options.runRetention ?? DEFAULT_RUN_RETENTION;
    const collector = new RunCollector({
      dataDir: options.dataDir,
      nodeId: options.nodeId,
      retention,
      onRemoved: (name, why) => log.info('finished run removed', { name, why }),
    });
    let collectedAt = 0;
    let collecting = false;
    const collect = async (): Promise<void> => {
      if (collecting) return;
      collecting = true;
      try {
        const due = Date.now() - collectedAt >= (options.collectEveryMs ?? 10_000);
        const full = ((await diskUsagePercent(options.dataDir)) ?? 0) >= retention.diskUsagePercent;
        if (!due && !full) return;
        collectedAt = Date.now();
        const { view } = await readState();
        await collector.collect({ instances: view.instances, held: manager.runners().map((r) => r.instanceId) });
      } catch (err) {
        log.debug('finished-run collection skipped', { error: err });
      } finally {
        collecting = false;
      }
    };
    const collectTimer = setInterval(() => void collect(), 1000);
    return async () => {
      clearTimeout(retryTimer);
      clearInterval(collectTimer);
      resyncSub.unsubscribe();
      sub.unsubscribe();
      actor.send({ type: 'stop' });
      // The effect being performed (a stop) may still run: it ends within the same deadlines as the shutdown.
      const performing = effects.close();
      await manager.shutdown();
      await performing;
      managers.delete(ctx.name);
    };
  },
});

function managerOf(name: string): RunnerManager | undefined {
  return managers.get(name);
}

function summaries(manager: RunnerManager): RunnerSummary[] {
  return manager.runners().map((r) => ({
    instanceId: r.instanceId,
    runnerId: r.runnerId,
    rank: r.rank,
    pid: r.pid ?? null,
    status: r.status?.state ?? 'Idle',
    failures: r.failures,
    gaveUp: r.gaveUp,
  }));
}

async function perform(manager: RunnerManager, effect: SupervisorEffect): Promise<void> {
  switch (effect.type) {
    case 'start':
      return manager.instanceCreated(effect.instance);
    case 'replace':
      return manager.instanceReplaced(effect.instance);
    case 'stop':
      return manager.instanceDeleted(effect.instanceId);
    case 'peer':
      return manager.runnerStatusChanged(effect.instanceId, effect.nodeId, effect.status, effect.exitCode);
    case 'task':
      return manager.taskCreated({
        taskId: effect.taskId,
        instanceId: effect.instanceId,
        kind: effect.kind,
        ...(effect.params !== undefined &&
        effect.params !== null &&
        typeof effect.params === 'object' &&
        !Array.isArray(effect.params)
          ? { params: effect.params as Record<string, unknown> }
          : {}),
        ...(effect.timeoutMs !== undefined ? { timeoutMs: effect.timeoutMs } : {}),
      });
    case 'cancel':
      return manager.cancelTask(effect.taskId);
  }
}
