/**
 * The network profiler's statechart (pure; I/O is in worker.ts, which provides the `probeRound` and `measureLinks`
 * actors). idle → probing (a streamed reachability round) → measuring (only links that are new, changed or asked
 * for) → idle. Rounds start on a timer, on a peers/profile change or on request; measurement never runs
 * continuously. Results become emitted cluster events: LinkUp, LinkDown, LinkMeasured, NodeProfileUpdated.
 */
import { assign, enqueueActions, fromCallback, setup } from 'xstate';
import type { LinkDown, LinkMeasured, LinkUp, NodeProfileUpdated } from '../../protocols/events.js';
import type { PeerTarget, ReachResult } from './probes/reachability.js';
import type { ProfilerMessage } from './messages.js';
import {
  interfacesChanged,
  linkKey,
  deviceChanged,
  memoryChanged,
  restartedPeers,
  sameTargets,
  targetKeys,
  type PeerLink,
  type Profile,
} from './links.js';
import {
  DEFAULT_QUIET_MS,
  linksToProbe,
  NO_WORK,
  updateWork,
  type WorkInstance,
  type WorkState,
} from './measure-policy.js';

export interface ProfilerInput {
  readonly nodeId: string;
  readonly incarnation?: number;
  readonly probeIntervalMs?: number;
  /** measure-policy.ts: quiet time after an instance ended on a link's node before it is probed again */
  readonly quietMs?: number;
  /** the clock of the measurement policy (tests pass their own) */
  readonly now?: () => number;
}

export interface ProfilerContext {
  readonly nodeId: string;
  readonly incarnation: number | undefined;
  readonly probeIntervalMs: number;
  readonly targets: readonly PeerTarget[];
  readonly links: Readonly<Record<string, PeerLink>>;
  /** queued for measurement; links the policy defers (work on their nodes) wait here until it allows them */
  readonly toMeasure: readonly string[];
  /** instances running in the cluster, as the measurement policy sees them */
  readonly work: WorkState;
  readonly quietMs: number;
  readonly now: () => number;
  /** the measurement pass in progress (taken from toMeasure when it starts) */
  readonly jobs: readonly MeasureJob[];
  /** peers or interfaces changed while busy: run another round afterwards */
  readonly dirty: boolean;
  readonly profile: Profile | undefined;
  readonly rounds: number;
  readonly lastRound: { readonly verified: number; readonly failed: number } | undefined;
}

export type ProfilerEvent =
  /** `peers`, `probe`, `measure`: from other actors, their types from the schemas (messages.ts) */
  | ProfilerMessage
  | { type: 'profile'; profile: Profile }
  | { type: 'probe.result'; result: ReachResult }
  | { type: 'probe.done' }
  | { type: 'measure.result'; key: string; rttMs: number; bandwidthBps: number; measuredAt: number }
  | { type: 'measure.failed'; key: string; error: string }
  /** the worker's last check before a probe found work on the link's nodes: queue it again */
  | { type: 'measure.deferred'; key: string }
  /** the cluster's instances (the worker polls the topology keeper) */
  | { type: 'work'; instances: WorkInstance[] }
  | { type: 'measure.done' };

export type ProfilerEmitted = LinkUp | LinkDown | LinkMeasured | NodeProfileUpdated;

export interface MeasureJob {
  readonly key: string;
  readonly ip: string;
  readonly port: number;
}

const withoutKeys = (links: Readonly<Record<string, PeerLink>>, drop: ReadonlySet<string>): Record<string, PeerLink> =>
  Object.fromEntries(Object.entries(links).filter(([k]) => !drop.has(k)));

export const networkProfilerMachine = setup({
  types: {} as { context: ProfilerContext; events: ProfilerEvent; input: ProfilerInput; emitted: ProfilerEmitted },
  actors: {
    // Placeholders: the worker provides the real I/O (machine.provide({ actors })).
    probeRound: fromCallback<ProfilerEvent, { targets: readonly PeerTarget[] }>(({ sendBack }) => {
      sendBack({ type: 'probe.done' });
    }),
    measureLinks: fromCallback<ProfilerEvent, { jobs: readonly MeasureJob[] }>(({ sendBack }) => {
      sendBack({ type: 'measure.done' });
    }),
  },
  delays: {
    probeInterval: ({ context }) => context.probeIntervalMs,
  },
  actions: {
    setPeers: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'peers' || sameTargets(context.targets, event.peers)) return;
      const keep = targetKeys(event.peers);
      const gone = new Set(Object.keys(context.links).filter((k) => !keep.has(k)));
      for (const k of gone) {
        const l = context.links[k]!;
        enqueue.emit({
          type: 'LinkDown',
          source: context.nodeId,
          sink: l.sink,
          ip: l.ip,
          reason: 'address no longer advertised',
          ...inc(context),
        });
      }
      // A restarted peer's links are already gone from the cluster state (its new NodeJoined dropped them): forget
      // them without a LinkDown, so the next round announces them again (LinkUp) and measures them.
      const restarted = restartedPeers(context.targets, event.peers);
      for (const [k, l] of Object.entries(context.links)) if (restarted.has(l.sink)) gone.add(k);
      enqueue.assign({
        targets: event.peers,
        links: withoutKeys(context.links, gone),
        toMeasure: context.toMeasure.filter((k) => !gone.has(k)),
        dirty: true,
      });
    }),
    setProfile: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'profile') return;
      const ifChanged = interfacesChanged(context.profile?.interfaces, event.profile.interfaces);
      if (
        !ifChanged &&
        !memoryChanged(context.profile?.memory, event.profile.memory) &&
        !deviceChanged(context.profile?.device, event.profile.device)
      )
        return;
      enqueue.emit({
        type: 'NodeProfileUpdated',
        nodeId: context.nodeId,
        ...(context.incarnation !== undefined ? { incarnation: context.incarnation } : {}),
        interfaces: event.profile.interfaces,
        memory: event.profile.memory,
        ...(event.profile.runners ? { runners: event.profile.runners } : {}),
        ...(event.profile.device ? { device: event.profile.device } : {}),
      });
      // Our own interfaces changed: every link may now run differently, so re-probe and re-measure them all.
      enqueue.assign({
        profile: event.profile,
        ...(ifChanged && context.profile ? { dirty: true, toMeasure: Object.keys(context.links) } : {}),
      });
    }),
    applyResult: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'probe.result') return;
      const r = event.result;
      const sink = r.ok ? r.nodeId : r.expectedNodeId;
      const key = linkKey(sink, r.address);
      const known = context.links[key];
      if (r.ok && !known) {
        enqueue.emit({
          type: 'LinkUp',
          source: context.nodeId,
          sink,
          ip: r.address,
          linkType: r.type,
          ...inc(context),
        });
        enqueue.assign({
          links: { ...context.links, [key]: { sink, ip: r.address, type: r.type, port: r.port } },
          toMeasure: [...context.toMeasure, key],
        });
      } else if (!r.ok && known) {
        const reason =
          r.reason === 'mismatch'
            ? `address now answers as ${r.answeredBy ?? 'another node'}`
            : `no answer after ${r.attempts} attempts`;
        enqueue.emit({ type: 'LinkDown', source: context.nodeId, sink, ip: r.address, reason, ...inc(context) });
        enqueue.assign({
          links: withoutKeys(context.links, new Set([key])),
          toMeasure: context.toMeasure.filter((k) => k !== key),
        });
      }
    }),
    requestMeasure: assign(({ context, event }) => {
      if (event.type !== 'measure') return {};
      const keys = Object.values(context.links)
        .filter((l) => (!event.sink || l.sink === event.sink) && (!event.ip || l.ip === event.ip))
        .map((l) => linkKey(l.sink, l.ip));
      return { toMeasure: [...new Set([...context.toMeasure, ...keys])] };
    }),
    // Only what the policy allows now; deferred links stay queued for a later pass.
    takeJobs: assign(({ context }) => {
      const { now, deferred } = allowed(context);
      return {
        jobs: now.map(({ key, l }) => ({ key, ip: l.ip, port: l.port })),
        toMeasure: deferred.map((d) => d.key),
      };
    }),
    setWork: assign(({ context, event }) => {
      if (event.type !== 'work') return {};
      const work = updateWork(context.work, event.instances, context.now());
      return JSON.stringify(work) === JSON.stringify(context.work) ? {} : { work }; // no new snapshot for the same facts
    }),
    requeue: assign(({ context, event }) =>
      event.type === 'measure.deferred' && !context.toMeasure.includes(event.key)
        ? { toMeasure: [...context.toMeasure, event.key] }
        : {},
    ),
    applyMeasured: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'measure.result') return;
      const l = context.links[event.key];
      if (!l) return; // went down while being measured
      enqueue.emit({
        type: 'LinkMeasured',
        source: context.nodeId,
        sink: l.sink,
        ip: l.ip,
        rttMs: event.rttMs,
        bandwidthBps: event.bandwidthBps,
        measuredAt: event.measuredAt,
        ...inc(context),
      });
      enqueue.assign({
        links: {
          ...context.links,
          [event.key]: { ...l, rttMs: event.rttMs, bandwidthBps: event.bandwidthBps, measuredAt: event.measuredAt },
        },
      });
    }),
  },
  guards: {
    hasWork: ({ context }) => allowed(context).now.length > 0,
    isDirty: ({ context }) => context.dirty,
  },
}).createMachine({
  id: 'network-profiler',
  context: ({ input }) => ({
    nodeId: input.nodeId,
    incarnation: input.incarnation,
    probeIntervalMs: input.probeIntervalMs ?? 10_000,
    targets: [],
    links: {},
    toMeasure: [],
    jobs: [],
    dirty: false,
    profile: undefined,
    rounds: 0,
    lastRound: undefined,
    work: NO_WORK,
    quietMs: input.quietMs ?? DEFAULT_QUIET_MS,
    now: input.now ?? Date.now,
  }),
  initial: 'idle',
  on: {
    profile: { actions: 'setProfile' },
    peers: { actions: 'setPeers' },
    measure: { actions: 'requestMeasure' },
    probe: { actions: assign({ dirty: true }) },
    work: { actions: 'setWork' },
    'measure.deferred': { actions: 'requeue' },
  },
  states: {
    idle: {
      always: [
        { guard: 'isDirty', target: 'probing' },
        { guard: 'hasWork', target: 'measuring', actions: 'takeJobs' },
      ],
      after: { probeInterval: 'probing' },
      on: { probe: 'probing' },
    },
    probing: {
      entry: assign(({ context }) => ({
        dirty: false,
        rounds: context.rounds + 1,
        lastRound: { verified: 0, failed: 0 },
      })),
      invoke: { src: 'probeRound', input: ({ context }) => ({ targets: context.targets }) },
      on: {
        'probe.result': {
          actions: [
            'applyResult',
            assign(({ context, event }) => ({
              lastRound: {
                verified: (context.lastRound?.verified ?? 0) + (event.result.ok ? 1 : 0),
                failed: (context.lastRound?.failed ?? 0) + (event.result.ok ? 0 : 1),
              },
            })),
          ],
        },
        'probe.done': [{ guard: 'hasWork', target: 'measuring', actions: 'takeJobs' }, { target: 'idle' }],
      },
    },
    measuring: {
      // Links found or asked for from now on wait in toMeasure for a later pass.
      invoke: { src: 'measureLinks', input: ({ context }) => ({ jobs: context.jobs }) },
      on: {
        'measure.result': { actions: 'applyMeasured' },
        'measure.failed': {},
        'measure.done': { target: 'idle', actions: assign({ jobs: () => [] }) },
      },
    },
  },
});

/** Queued links that still exist, split by the measurement policy into now and deferred. */
export function allowed(context: ProfilerContext): {
  now: { key: string; l: PeerLink; sink: string }[];
  deferred: { key: string; l: PeerLink; sink: string }[];
} {
  const queued = context.toMeasure.flatMap((key) => {
    const l = context.links[key];
    return l ? [{ key, l, sink: l.sink }] : [];
  });
  return linksToProbe(queued, context.work, context.nodeId, context.now(), context.quietMs);
}

function inc(context: ProfilerContext): { sourceIncarnation?: number } {
  return context.incarnation !== undefined ? { sourceIncarnation: context.incarnation } : {};
}
