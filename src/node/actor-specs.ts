/**
 * The actors a node runs under its root supervisor, in start order, with the options each receives.
 * The topology keeper and the cluster share one worker: the agreement applies committed entries to the keeper's
 * state, the one applied copy (src/actors/cluster/worker.ts), so the thread starts as `topology-keeper` and also
 * answers at `cluster`. Shutdown runs in SHUTDOWN_ORDER (planner → runners → profiler → keeper and cluster: each
 * stops before what it depends on).
 */
import { hostname } from 'node:os';
import type { ActorSpec } from '../runtime/actor-host.js';
import { siblingModule } from '../runtime/module-url.js';
import { ACTOR_YOUNG_GENERATION_MB, type NodeConfig } from './config.js';
import type { NodeIdentity } from '../actors/cluster/storage/identity.js';
import type { ClusterCredential } from './credentials.js';

export interface ActorSpecContext {
  readonly config: NodeConfig;
  readonly identity: NodeIdentity;
  readonly credential: ClusterCredential;
  /** Epoch ms of this process start (the election prefers the longest-lived node). */
  readonly startedAt: number;
  /** The port the API listens on (known after it bound, when --port 0). */
  readonly apiPort: number;
  readonly version: string;
}

const actorModule = (name: string): URL => siblingModule(import.meta.url, `../actors/${name}/worker`);

export const ACTOR_NAMES = [
  'topology-keeper',
  'cluster',
  'network-profiler',
  'placement-planner',
  'runner-supervisor',
] as const;
export type ActorName = (typeof ACTOR_NAMES)[number];

export const SHUTDOWN_ORDER: readonly ActorName[] = [
  'placement-planner',
  'runner-supervisor',
  'network-profiler',
  'topology-keeper',
];

export function actorSpecs(ctx: ActorSpecContext, only?: readonly ActorName[]): ActorSpec[] {
  const { config, identity } = ctx;
  const common = { nodeId: identity.nodeId, incarnation: identity.incarnation, dataDir: config.dataDir };
  const dataKey = ctx.credential.mode === 'secret' ? ctx.credential.keys.dataKey : null;
  const all: Record<ActorName, unknown> = {
    // Alone (an embedder without the cluster): the keeper answers on the empty state.
    'topology-keeper': { ...common, agreement: false },
    cluster: {
      ...common,
      startedAt: ctx.startedAt,
      name: config.name ?? hostname(),
      clusterName: config.cluster,
      // The cluster port never sees the secret itself, only the key derived for it (null: --insecure-open).
      secret: ctx.credential.mode === 'secret' ? ctx.credential.keys.peerKey : null,
      peers: config.peers,
      host: config.host,
      apiPort: ctx.apiPort,
      mdns: config.mdns,
      failureTimeoutMs: config.failureTimeoutMs,
      repairState: config.repairState,
      maxPendingHandshakes: config.maxPendingHandshakes,
      version: ctx.version,
      // Static peers are given as API addresses (what users know); the cluster listens one port above.
      peerPortOffset: 1,
    },
    // Data-plane proofs (probe requests, ring sockets) use their own derived key; null in open mode.
    'network-profiler': {
      ...common,
      ifaceTypes: config.ifaceTypes,
      apiPort: ctx.apiPort,
      dataKey,
      probeIntervalMs: config.probeIntervalMs,
      confirmMeasureMs: config.confirmMeasureMs,
      runners: { allowExec: config.allowExec, maxRunners: config.maxRunners },
      declaredDevice: {
        ...(config.deviceGflops !== undefined ? { gflops: config.deviceGflops } : {}),
        ...(config.deviceMemBandwidthGBps !== undefined ? { memoryBandwidthGBps: config.deviceMemBandwidthGBps } : {}),
      },
      ...(config.memoryLimitBytes !== undefined ? { memoryLimitBytes: config.memoryLimitBytes } : {}),
    },
    'placement-planner': { ...common, apiPort: ctx.apiPort, instancePorts: config.instancePorts },
    // Exec policy and quota are enforced by the supervisor at spawn time, whoever proposed the instance.
    'runner-supervisor': {
      ...common,
      dataKey,
      allowExec: config.allowExec,
      maxRunners: config.maxRunners,
      logRotation: config.logRotation,
      runRetention: config.runRetention,
    },
  };
  const wanted = (name: ActorName) => !only || only.includes(name);
  const heap =
    config.actorHeapMb !== undefined
      ? { heapLimitMb: config.actorHeapMb, youngGenerationMb: ACTOR_YOUNG_GENERATION_MB }
      : {};
  const spec = (name: ActorName): ActorSpec => {
    if (name !== 'topology-keeper') return { name, module: actorModule(name), options: all[name] };
    return wanted('cluster')
      ? { name, module: actorModule('cluster'), options: all.cluster, aliases: ['cluster'] }
      : { name, module: actorModule('cluster'), options: all[name] };
  };
  const idleCollectionMs = config.idleGcMinutes * 60_000;
  return ACTOR_NAMES.filter((name) => name !== 'cluster' && wanted(name)).map((name) => ({
    ...spec(name),
    ...heap,
    idleCollectionMs,
  }));
}
