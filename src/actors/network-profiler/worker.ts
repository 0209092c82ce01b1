/**
 * Worker entry of the network profiler (the shell). Provides the machine's I/O actors (streamed reachability
 * rounds, sequential link measurement), reads this node's profile (interfaces + memory) periodically, learns
 * peers from the topology keeper (or from `peers` messages), and forwards the machine's emitted events:
 * proposed to `cluster` (the leader sequences them) and sent as-is to every actor in `options.notify`.
 *
 * Messages in: `peers {peers}`, `probe`, `measure {sink?, ip?}`. Requests: `links` → current links,
 * `measure {sink?, ip?}` and `probe` → {queued}. Built-in `snapshot` → {value, links, targets, lastRound, rounds}.
 */
import { BroadcastChannel, workerData } from 'node:worker_threads';
import { fromCallback } from 'xstate';
import { serveActor } from '../../runtime/serve-actor.js';
import type { InterfaceType, RunnerPolicy } from '../../protocols/events.js';
import { discoverInterfaces } from '../../native/interfaces.js';
import { capMemory, readMemory } from '../../native/memory.js';
import { measureCapacity, measureRtt } from './probes/measure.js';
import { probeSigner } from '../../protocols/probe-proof.js';
import { probeReachability, type PeerTarget } from './probes/reachability.js';
import { targetsFromTopology } from './links.js';
import {
  allowed,
  networkProfilerMachine,
  type MeasureJob,
  type ProfilerEmitted,
  type ProfilerEvent,
} from './machine.js';
import { decodeProfilerEvent } from './messages.js';
import { probeBusyChannelName } from '../../protocols/probe.js';
import { MeasurementConfirmer } from './confirm.js';
import { reconcileWithState } from './reconcile.js';
import { createLogger } from '../../runtime/log.js';
import { TorusError } from '../../protocols/errors.js';
import { instancesFromAnswer, probeDecision, type ProbeDecision } from './measure-policy.js';
import { deviceInfo, type DeclaredDevice } from './device-figures.js';
import type { DeviceInfo } from '../../protocols/events.js';
import type { DeviceSpeed } from '../../native/device-speed.js';
import measureDeviceInline from '../../native/device-speed-task.js';

export interface ProfilerOptions {
  readonly nodeId: string;
  readonly incarnation?: number;
  readonly ifaceTypes?: Readonly<Record<string, InterfaceType>>;
  readonly apiPort?: number;
  /** Data-plane key: the probe requests to peers carry its proof (null/absent: open mode). */
  readonly dataKey?: string | null;
  readonly probeIntervalMs?: number;
  readonly probeTimeoutMs?: number;
  readonly attempts?: number;
  /** length of the throughput transfer per link (bounded further by MAX_PROBE_MS) */
  readonly throughputMs?: number;
  /** capacity probes per link, the best counts (default 2) */
  readonly throughputRepeats?: number;
  /** parallel connections per capacity probe (default 1) */
  readonly throughputStreams?: number;
  readonly profileIntervalMs?: number;
  /** Measure each new link once more this long after the last new link was measured (default 15 s; 0: never). */
  readonly confirmMeasureMs?: number;
  /** measure-policy.ts: links of nodes an instance ran on are probed again this long after it ended (default 5 s) */
  readonly measureQuietMs?: number;
  /** 'topology' (default): targets from the topology keeper's nodes; 'none': only `peers` messages */
  readonly peersFrom?: 'topology' | 'none';
  /** actor that sequences events (default 'cluster', via `propose`); null: none */
  readonly eventsTo?: string | null;
  /** actors that get each event as a plain message too (tests, dashboards) */
  readonly notify?: readonly string[];
  readonly sysRoot?: string;
  /** This node's exec policy and runner quota, advertised in its profile (placement skips nodes that refuse). */
  readonly runners?: RunnerPolicy;
  /** Device figures given by flags (`--device-gflops`, `--device-mem-bandwidth`); they replace measured ones. */
  readonly declaredDevice?: DeclaredDevice;
  /** `--memory-limit`: the most memory this node advertises (available and total), bytes. */
  readonly memoryLimitBytes?: number;
  /** Measure memory bandwidth and compute once the node runs (default true; tests of other things turn it off). */
  readonly measureDevice?: boolean;
  /** How long after start the device measurement runs, so it does not compete with start-up (default 1500 ms). */
  readonly deviceMeasureDelayMs?: number;
}

const o = ((workerData ?? {}) as { options?: ProfilerOptions }).options ?? ({ nodeId: 'unknown' } as ProfilerOptions);

// This node's sink refuses other probes while we send one (protocols/probe.ts: probes are exclusive); the
// announcement expires by itself should this thread die mid-transfer.
const busyChannel = new BroadcastChannel(probeBusyChannelName(o.nodeId));
busyChannel.unref();
const announce = (active: boolean): void =>
  busyChannel.postMessage({ until: active ? Date.now() + (o.throughputMs ?? 300) + 3000 : 0 });

const confirmer = new MeasurementConfirmer(o.confirmMeasureMs ?? 15_000);
const signer = probeSigner(o.dataKey ?? null, o.nodeId);
const log = createLogger({ component: 'network-profiler' });
/** This node's device figures (declared, then measured) and the way to measure again (set by setup). */
let currentDevice: DeviceInfo | undefined;
let remeasureDevice: (() => Promise<DeviceInfo | undefined>) | undefined;
let requestMeasure: ((sink: string, ip: string) => void) | undefined;
const failures = new Map<string, number>();
/** Retries of a failed link measurement back off from one probe interval up to this bound, and never stop. */
const MAX_MEASURE_RETRY_MS = 300_000;
/** Failures logged as warnings; later ones of the same link go to debug (a dead link must not flood the log). */
const WARNED_MEASURE_FAILURES = 3;
/** The policy's verdict for one link right before its probe, on freshly read instances (set up in `setup`). */
let gate: ((key: string) => Promise<ProbeDecision>) | undefined;

/**
 * A failed measurement (an RTT sample or transfer timing out on a busy machine, a sink gone for a moment) is tried
 * again later: the statechart drops failed jobs, and the link would otherwise stay unmeasured until something else
 * asks (seen end to end: one LAN link of a 3-node lab never got a bandwidth). The delay doubles from one probe
 * interval up to MAX_MEASURE_RETRY_MS; a link that is up is never given up on, and a link that goes down leaves the
 * profiler's links, so the retry finds nothing to measure.
 */
function retryMeasureLater(key: string, error: unknown): void {
  const n = (failures.get(key) ?? 0) + 1;
  failures.set(key, n);
  const sep = key.lastIndexOf('|');
  if (sep < 0) return;
  const delayMs = Math.min((o.probeIntervalMs ?? 10_000) * 2 ** (n - 1), MAX_MEASURE_RETRY_MS);
  (n <= WARNED_MEASURE_FAILURES ? log.warn : log.debug)('link measurement failed', {
    link: key,
    attempt: n,
    retryInMs: delayMs,
    error,
  });
  setTimeout(() => requestMeasure?.(key.slice(0, sep), key.slice(sep + 1)), delayMs).unref();
}

// The statechart is pure; its I/O actors are provided here.
const machine = networkProfilerMachine.provide({
  actors: {
    probeRound: fromCallback<ProfilerEvent, { targets: readonly PeerTarget[] }>(({ input, sendBack }) => {
      const ac = new AbortController();
      void (async () => {
        for await (const result of probeReachability(input.targets, {
          attempts: o.attempts ?? 3,
          timeoutMs: o.probeTimeoutMs ?? 1000,
          includeFailures: true,
          signal: ac.signal,
        })) {
          if (ac.signal.aborted) return;
          sendBack({ type: 'probe.result', result });
        }
        if (!ac.signal.aborted) sendBack({ type: 'probe.done' });
      })();
      return () => ac.abort();
    }),
    measureLinks: fromCallback<ProfilerEvent, { jobs: readonly MeasureJob[] }>(({ input, sendBack }) => {
      const ac = new AbortController();
      void (async () => {
        // One link at a time: measurements must not compete with each other (or eat bandwidth work needs).
        for (const job of input.jobs) {
          if (ac.signal.aborted) return;
          // The statechart chose these links by the instances it knew; one may have been placed since.
          const verdict = (await gate?.(job.key)) ?? { probe: true };
          if (ac.signal.aborted) return;
          if (!verdict.probe) {
            log.info('link measurement deferred', { link: job.key, reason: verdict.reason });
            sendBack({ type: 'measure.deferred', key: job.key });
            continue;
          }
          try {
            const { rttMs } = await measureRtt(job.ip, job.port, { samples: 7, signal: ac.signal, signer });
            const sink = job.key.slice(0, job.key.lastIndexOf('|'));
            const report = await measureCapacity(job.ip, job.port, {
              durationMs: o.throughputMs ?? 300,
              repeats: o.throughputRepeats ?? 2,
              streams: o.throughputStreams ?? 1,
              expectNodeId: sink,
              signal: ac.signal,
              onTransfer: announce,
              signer,
            });
            const best = confirmer.combine(job.key, { rttMs, bandwidthBps: report.bps });
            failures.delete(job.key);
            if (!ac.signal.aborted)
              sendBack({
                type: 'measure.result',
                key: job.key,
                rttMs: best.rttMs,
                bandwidthBps: best.bandwidthBps,
                measuredAt: Date.now(),
              });
          } catch (error) {
            if (ac.signal.aborted) return;
            retryMeasureLater(job.key, error);
            sendBack({ type: 'measure.failed', key: job.key, error: (error as Error).message });
          }
        }
        if (!ac.signal.aborted) sendBack({ type: 'measure.done' });
      })();
      return () => ac.abort();
    }),
  },
});

serveActor<typeof networkProfilerMachine, ProfilerOptions>({
  name: 'network-profiler',
  machine,
  input: (o) => ({
    nodeId: o.nodeId,
    ...(o.incarnation !== undefined ? { incarnation: o.incarnation } : {}),
    ...(o.probeIntervalMs ? { probeIntervalMs: o.probeIntervalMs } : {}),
    ...(o.measureQuietMs !== undefined ? { quietMs: o.measureQuietMs } : {}),
  }),
  decodeEvent: (body) => decodeProfilerEvent(body),
  view: (s) => ({
    value: s.value,
    rounds: s.context.rounds,
    lastRound: s.context.lastRound ?? null,
    targets: s.context.targets.length,
    links: Object.values(s.context.links),
    deferred: allowed(s.context).deferred.map((d) => d.key),
  }),
  requests: {
    links: (_b, ctx) => Object.values(ctx.actor.getSnapshot().context.links),
    // The API's POST /v1/links/measure lands here: answers which links will be measured; a filter that matches
    // none is refused (404) and changes nothing.
    measure: (body, ctx) => {
      const event = decodeProfilerEvent(body);
      if (event.type !== 'measure') throw new TorusError('TORUS_PROTOCOL_INVALID', 'expected a measure request');
      const links = Object.values(ctx.actor.getSnapshot().context.links).filter(
        (l) => (!event.sink || l.sink === event.sink) && (!event.ip || l.ip === event.ip),
      );
      if (links.length === 0 && (event.sink || event.ip)) {
        throw new TorusError(
          'TORUS_API_NOT_FOUND',
          `no link of this node matches ${[event.sink && `peer ${event.sink}`, event.ip && `address ${event.ip}`].filter(Boolean).join(' at ')}`,
          { peer: event.sink ?? null, ip: event.ip ?? null },
        );
      }
      ctx.actor.send(event);
      return {
        links: links.map((l) => ({
          sink: l.sink,
          ip: l.ip,
          type: l.type,
          ...(l.measuredAt !== undefined ? { measuredAt: l.measuredAt } : {}),
        })),
        queued: ctx.actor.getSnapshot().context.toMeasure.length,
      };
    },
    probe: (_b, ctx) => {
      ctx.actor.send({ type: 'probe' });
      return { queued: true };
    },
    // Re-measure this node's memory bandwidth and compute now; answers the new figures.
    measureDevice: async () => ({ device: (await remeasureDevice?.()) ?? null }),
    device: () => ({ device: currentDevice ?? null }),
  },
  setup: (ctx) => {
    const o = ctx.options;
    const timers: NodeJS.Timeout[] = [];
    requestMeasure = (sink, ip) => ctx.actor.send({ type: 'measure', sink, ip });
    confirmer.start(requestMeasure);
    const propose = (event: ProfilerEmitted): void => {
      if (o.eventsTo === null) return;
      ctx
        .request(o.eventsTo ?? 'cluster', { type: 'propose', event }, { timeoutMs: 5000 })
        .catch((error: unknown) => ctx.log.debug('event not proposed', { type: event.type, error }));
    };
    const forward = ctx.actor.on('*', (event) => {
      confirmer.observe(event as { type: string });
      propose(event);
      for (const to of o.notify ?? []) ctx.send(to, { ...event } as { type: string });
    });
    currentDevice = deviceInfo(o.declaredDevice, undefined, undefined);
    let measuring: Promise<DeviceInfo | undefined> | undefined;
    const measureDevice = async (): Promise<DeviceInfo | undefined> => {
      let speed: DeviceSpeed;
      try {
        speed = await ctx.request<DeviceSpeed>(
          'cpu-pool',
          { type: 'run', task: 'device.measure', input: {} },
          { timeoutMs: 30_000 },
        );
      } catch (error) {
        // The pool is a means: without it this worker thread measures (bounded, ~1.6 s).
        ctx.log.debug('cpu pool unavailable; measuring the device inline', { error });
        speed = measureDeviceInline({});
      }
      currentDevice = deviceInfo(o.declaredDevice, speed, Date.now());
      ctx.log.info('device measured', { ...speed });
      await readProfile();
      return currentDevice;
    };
    remeasureDevice = () => {
      measuring ??= measureDevice().finally(() => {
        measuring = undefined;
      });
      return measuring;
    };
    const readProfile = async (): Promise<void> => {
      try {
        const [interfaces, memory] = await Promise.all([
          discoverInterfaces({ overrides: o.ifaceTypes ?? {}, ...(o.sysRoot ? { sysRoot: o.sysRoot } : {}) }),
          readMemory().then((m) => capMemory(m, o.memoryLimitBytes)),
        ]);
        ctx.actor.send({
          type: 'profile',
          profile: {
            interfaces: interfaces.map(({ reason: _r, ...i }) => i),
            memory,
            ...(o.runners ? { runners: o.runners } : {}),
            ...(currentDevice ? { device: currentDevice } : {}),
          },
        });
      } catch (error) {
        ctx.log.warn('profile read failed', { error });
      }
    };
    // The instances running in the cluster, for the measurement policy (measure-policy.ts).
    const readWork = async (): Promise<void> => {
      try {
        const answer = await ctx.request('topology-keeper', { type: 'instances' }, { timeoutMs: 3000 });
        ctx.actor.send({ type: 'work', instances: instancesFromAnswer(answer) });
      } catch (error) {
        ctx.log.debug('instances not available', { error });
      }
    };
    gate = async (key) => {
      if ((o.peersFrom ?? 'topology') === 'topology') await readWork();
      const c = ctx.actor.getSnapshot().context;
      return probeDecision(c.work, c.nodeId, key.slice(0, key.lastIndexOf('|')), c.now(), c.quietMs);
    };
    const pollPeers = async (): Promise<void> => {
      void readWork();
      try {
        const answer = await ctx.request('topology-keeper', { type: 'topology' }, { timeoutMs: 3000 });
        ctx.actor.send({ type: 'peers', peers: targetsFromTopology(answer, o.nodeId) });
        // Re-send what the replicated state lost of our facts (reconcile.ts); only between rounds, so the
        // context is settled, and only when events go to the cluster at all.
        const snap = ctx.actor.getSnapshot();
        if (o.eventsTo !== null && snap.value === 'idle' && snap.context.rounds > 0) {
          const missing = reconcileWithState(answer, {
            nodeId: o.nodeId,
            incarnation: snap.context.incarnation,
            links: snap.context.links,
            profile: snap.context.profile,
          });
          if (missing.length > 0)
            ctx.log.info('re-sending facts the cluster state lacks', { events: missing.map((e) => e.type) });
          for (const e of missing) propose(e);
        }
      } catch (error) {
        ctx.log.debug('topology not available', { error });
      }
    };
    void readProfile();
    timers.push(setInterval(() => void readProfile(), o.profileIntervalMs ?? 30_000));
    // Both figures declared (an accelerator the flags describe): nothing to measure at start; a request still can.
    const declaredWhole = o.declaredDevice?.gflops !== undefined && o.declaredDevice?.memoryBandwidthGBps !== undefined;
    if (o.measureDevice !== false && !declaredWhole)
      timers.push(
        setTimeout(
          () =>
            void remeasureDevice?.().catch((error: unknown) => ctx.log.warn('device measurement failed', { error })),
          o.deviceMeasureDelayMs ?? 1500,
        ),
      );
    if ((o.peersFrom ?? 'topology') === 'topology') {
      void pollPeers();
      timers.push(setInterval(() => void pollPeers(), Math.max(1000, (o.probeIntervalMs ?? 10_000) / 2)));
    }
    return () => {
      for (const t of timers) clearInterval(t);
      confirmer.stop();
      forward.unsubscribe();
    };
  },
});
