/**
 * Starts one torus node: identity, the actor runtime with its root supervisor, the HTTP API, and the actors
 * (topology keeper, cluster, network profiler, placement planner, runner supervisor). Embedders call this too.
 */
import { hostname } from 'node:os';
import { EventFeed } from '../api/event-feed.js';
import { createApiServer, type ApiServer } from '../api/server.js';
import { loadOrCreateIdentity, type NodeIdentity } from '../actors/cluster/storage/identity.js';
import { decodeIndexedEvent } from '../protocols/events.js';
import type { Body } from '../protocols/mailbox.js';
import { startIdleCollection } from '../runtime/idle-collection.js';
import { createLogger, setLogLevel } from '../runtime/log.js';
import { Runtime } from '../runtime/runtime.js';
import { actorSpecs, SHUTDOWN_ORDER, type ActorName } from './actor-specs.js';
import type { NodeConfig } from './config.js';
import { ActorNodeFacade } from './node-facade.js';
import { VERSION } from './version.js';
import { resolveCredential, type ClusterCredential } from './credentials.js';
import { loadNodeCert } from '../api/tls/node-cert.js';
import { peerSigner } from '../protocols/peer-http-proof.js';
import { createProbeHandler } from '../actors/network-profiler/probes/probe-handler.js';
import { CommandHandler } from '../actors/placement-planner/leader/command-handler.js';
import { StartGate } from './start-gate.js';
import { Replacer } from '../actors/placement-planner/leader/replacer.js';
import { rangesOverlap, type PortRange } from '../actors/placement-planner/search/ports.js';
import { hostEphemeralRange, LINUX_EPHEMERAL_RANGE_FILE } from '../native/ephemeral-ports.js';
import { secureDataDir } from './data-dir.js';
import { startLiveRingBench } from '../bench/live/ring-bench-live.js';
import { createArtifactService } from './artifact-service.js';
import { decodeRunnerArtifactsRequest, GATE_HOLD_MS, RunnerArtifactGate } from '../artifacts/runner-gate.js';

export interface TorusNode {
  readonly identity: NodeIdentity;
  readonly config: NodeConfig;
  /** The cluster credential in force (a secret and the keys derived from it, or `open` with --insecure-open). */
  readonly credential: ClusterCredential;
  readonly runtime: Runtime;
  readonly api: ApiServer;
  readonly startedAt: number;
  /** Ordered shutdown (idempotent); resolves when everything stopped. */
  shutdown(reason?: string): Promise<void>;
  /** Resolves with the exit code the process should end with (0 after a clean stop, 1 after an escalation). */
  readonly closed: Promise<number>;
}

export interface StartOptions {
  /** Run only these actors (embedding a subset, e.g. only the profiler and planner). */
  readonly actors?: readonly ActorName[];
}

const log = createLogger({ component: 'node' });

export async function startNode(config: NodeConfig, options: StartOptions = {}): Promise<TorusNode> {
  setLogLevel(config.logLevel);
  // The main thread's; each actor's worker starts its own from its spec (actor-specs.ts).
  const stopIdleCollection = startIdleCollection(config.idleGcMinutes * 60_000);
  secureDataDir(config.dataDir, (message, fields) => log.warn(message, fields));
  const identity = await loadOrCreateIdentity(config.dataDir);
  const credential = resolveCredential(config, (what) =>
    log.info(`cluster secret ${what}`, { dataDir: config.dataDir }),
  );
  warnIfPortsEphemeral(config.instancePorts);
  log.debug('malloc arenas', { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "glibc's default" });
  const startedAt = Date.now();
  const feed = new EventFeed({ retain: 10_000 });
  let exitCode = 0;
  let resolveClosed: (code: number) => void = () => {};
  const closed = new Promise<number>((resolve) => {
    resolveClosed = resolve;
  });
  let shuttingDown: Promise<void> | undefined;

  const runtime = new Runtime({
    nodeId: identity.nodeId,
    onEscalate: (actor, reason) => {
      log.error('an actor exceeded its restart intensity; shutting the node down', { actor, reason });
      process.stderr.write(`torus: actor ${actor} keeps failing (${reason}); shutting down\n`);
      exitCode = 1;
      void shutdown(`actor ${actor} escalated`);
    },
  });
  // The committed stream, in log order, from the thread that applies it (src/actors/cluster/worker.ts): the API
  // streams it (SSE) from this feed, the replacer watches it, and the runner supervisor follows it by index.
  const replacer = new Replacer(runtime, log);
  const toSupervisor = (body: Body) => {
    if (runtime.actors().includes('runner-supervisor')) runtime.send('runner-supervisor', body, 'node-events');
  };
  runtime.register('node-events', (body) => {
    if (body.type === 'state-replaced') {
      feed.replaced();
      toSupervisor({ type: 'state-replaced' });
      return null;
    }
    const entries = Array.isArray(body.entries) ? body.entries : [];
    for (const raw of entries) {
      const entry = decodeIndexedEvent(raw, 'body.entries');
      feed.append(entry);
      replacer.observe(entry);
    }
    if (entries.length > 0) toSupervisor({ type: 'events', entries });
    return null;
  });
  // The cluster actor asks this service to turn commands into events when this node leads.
  const commands = new CommandHandler(runtime, { maxInstances: config.maxInstances });
  // Commands wait for every actor (start-gate.ts): this node may lead before its planner has started.
  const started = new StartGate();
  runtime.register(
    'commands',
    started.guard((body: Body) => commands.serve(body)),
  );

  const artifacts = createArtifactService(runtime, config, identity.nodeId, credential, feed);
  // The runner supervisor asks here before it starts a runner whose workload lists artifacts (runner-gate.ts).
  const artifactGate = new RunnerArtifactGate(artifacts, identity.nodeId, { holdMs: GATE_HOLD_MS });
  runtime.register('artifacts', (body) => artifactGate.prepare(decodeRunnerArtifactsRequest(body)));
  const facade = new ActorNodeFacade({
    runtime,
    config,
    feed,
    log,
    nodeId: identity.nodeId,
    incarnation: identity.incarnation,
    name: config.name ?? hostname(),
    version: VERSION,
    startedAt,
    ringBench: (request, onProgress, facade) => startLiveRingBench(runtime, feed, request, onProgress, facade),
    artifacts,
    signPeer: peerSigner(credential.mode === 'secret' ? credential.keys.peerHttpKey : null, identity.nodeId),
  });
  const probeHandler = createProbeHandler(
    () => ({ nodeId: identity.nodeId, clusterName: config.cluster, incarnation: identity.incarnation }),
    { dataKey: credential.mode === 'secret' ? credential.keys.dataKey : null },
  );
  const tls = loadNodeCert({
    dataDir: config.dataDir,
    nodeId: identity.nodeId,
    certFile: config.tlsCert,
    keyFile: config.tlsKey,
  });
  const api = await createApiServer(facade, {
    tls,
    port: config.port,
    host: config.host,
    auth:
      credential.mode === 'open'
        ? { mode: 'open' }
        : {
            mode: 'token',
            token: credential.apiToken,
            secretSource: credential.source,
            peerKey: credential.keys.peerHttpKey,
          },
    allowedHosts: config.apiAllowedHosts,
    limits: {
      maxConnections: config.maxHttpConnections,
      maxConnectionsPerIp: config.maxHttpConnectionsPerIp,
      maxSseClients: config.maxSseClients,
      maxWriteRate: config.maxWriteRate,
    },
    // Artifact peer routes prove the cluster key themselves (HMAC), like the probes; everything else is the API.
    probeHandler: (req, res, awaitingContinue) =>
      artifacts.peerHandler(req, res) || probeHandler(req, res, awaitingContinue),
  });

  const shutdown = (reason = 'requested'): Promise<void> => {
    shuttingDown ??= (async () => {
      log.info('shutting down', { reason });
      await api.close();
      await artifacts.close();
      await runtime.shutdown({ order: SHUTDOWN_ORDER, deadlineMs: 5_000 });
      stopIdleCollection();
      resolveClosed(exitCode);
    })();
    return shuttingDown;
  };

  const specs = actorSpecs(
    { config, identity, credential, startedAt, apiPort: api.port, version: VERSION },
    options.actors,
  );
  try {
    for (const spec of specs) await runtime.supervise(spec);
    started.open();
    artifacts.start();
  } catch (error) {
    exitCode = 1;
    started.fail(error);
    await shutdown('an actor failed to start');
    throw error;
  }
  return { identity, config, credential, runtime, api, startedAt, shutdown, closed };
}

/** The planner's port band inside this host's ephemeral range: any outgoing connection can hold a runner's port. */
function warnIfPortsEphemeral(band: PortRange): void {
  const ephemeral = hostEphemeralRange();
  if (ephemeral && rangesOverlap(ephemeral, band))
    log.warn(
      `--instance-ports ${band.min}-${band.max} overlaps this host's ephemeral ports ${ephemeral.min}-${ephemeral.max} ` +
        `(${LINUX_EPHEMERAL_RANGE_FILE}): a runner can find its port taken by an outgoing connection. Choose a band ` +
        'outside it on every node, or narrow the range (sysctl net.ipv4.ip_local_port_range)',
      { instancePorts: band, ephemeralPorts: ephemeral },
    );
}
