import type { InstanceView, NodeInfo, NodeMetrics, TopologyView } from './node-facade.js';
import { renderProcessMetrics, type ProcessSample } from './process-metrics.js';
import { Exposition, series, type Labels, type MetricType } from './prometheus-text.js';

/**
 * Renders the Prometheus text exposition format (version 0.0.4) from the facade's views. Pure: the route
 * gathers the inputs. Runner states use the "state set" idiom: one series per runner, the state as a label,
 * value 1, so `count by (state) (torus_runner_state)` works without a fixed state list. The process_* and
 * nodejs_* families follow (src/api/process-metrics.ts).
 */
export interface MetricsInput {
  readonly node: NodeInfo;
  readonly lastIndex: number;
  readonly topology: TopologyView;
  readonly instances: readonly InstanceView[];
  readonly metrics: NodeMetrics;
  /** This process's CPU, memory, event loop and descriptors (process_* and nodejs_* families). */
  readonly process?: ProcessSample;
  /** Requests or connections refused at each API limit (src/api/limits.ts). */
  readonly limitRejections?: Readonly<Record<string, number>>;
}

/** One series per key of a counted record (an actor, a thread, a limit), sorted by key so scrapes diff cleanly. */
function perKey(name: string, label: string, counts: Readonly<Record<string, number>>): string[] {
  return Object.entries(counts)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, n]) => series(name, { [label]: key }, n));
}

export function renderMetrics(input: MetricsInput): string {
  const out = new Exposition();
  const family = (name: string, type: MetricType, help: string, lines: readonly string[]): void => {
    out.family(name, type, help, lines);
  };
  /** A family of one unlabelled series. */
  const single = (name: string, type: MetricType, help: string, value: number): void =>
    family(name, type, help, [series(name, {}, value)]);
  /** A family with one series per key of a counted record. */
  const keyed = (
    name: string,
    type: MetricType,
    help: string,
    label: string,
    counts: Readonly<Record<string, number>>,
  ): void => family(name, type, help, perKey(name, label, counts));
  const { node, topology, instances } = input;
  family('torus_node_info', 'gauge', 'this node (value 1); labels carry identity and role', [
    series(
      'torus_node_info',
      { id: node.id, name: node.name, version: node.version, role: node.role, incarnation: node.incarnation },
      1,
    ),
  ]);
  single('torus_node_uptime_seconds', 'gauge', 'seconds since this node process started', node.uptimeMs / 1000);
  single('torus_event_index', 'gauge', 'index of the last applied cluster event', input.lastIndex);
  single('torus_cluster_nodes', 'gauge', 'nodes in the cluster state', topology.nodes.length);
  single('torus_cluster_links', 'gauge', 'working links (one per source, sink and address)', topology.links.length);
  const link = (l: TopologyView['links'][number]): Labels => ({
    source: l.source,
    sink: l.sink,
    ip: l.ip,
    type: l.type,
  });
  /** A gauge per link that has the figure, scaled to its base unit (`/ divisor`). */
  const perLink = (
    name: string,
    help: string,
    figure: (l: TopologyView['links'][number]) => number | undefined,
    divisor: number,
  ): void =>
    family(
      name,
      'gauge',
      help,
      topology.links.flatMap((l) => {
        const value = figure(l);
        return value === undefined ? [] : [series(name, link(l), value / divisor)];
      }),
    );
  // Base unit bytes, as Prometheus asks (promtool rejects bits): the API's bandwidthBps is bits, so / 8.
  perLink(
    'torus_link_bandwidth_bytes_per_second',
    'measured throughput of a link, bytes per second',
    (l) => l.bandwidthBps,
    8,
  );
  perLink('torus_link_rtt_seconds', 'measured round-trip time of a link (median), seconds', (l) => l.rttMs, 1000);
  perLink(
    'torus_link_measured_timestamp_seconds',
    'when the link was last measured, Unix seconds',
    (l) => l.measuredAt,
    1000,
  );
  single('torus_instances', 'gauge', 'instances in the cluster state', instances.length);
  family(
    'torus_runner_state',
    'gauge',
    'one series per runner with its lifecycle state as a label (value 1)',
    instances.flatMap((i) =>
      i.runners.map((r) =>
        series('torus_runner_state', { instance: i.id, node: r.node, rank: r.rank, state: r.status }, 1),
      ),
    ),
  );
  family(
    'torus_runner_restarts_total',
    'counter',
    'restarts of a runner',
    instances.flatMap((i) =>
      i.runners
        .filter((r) => r.restarts !== undefined)
        .map((r) => series('torus_runner_restarts_total', { instance: i.id, node: r.node }, r.restarts ?? 0)),
    ),
  );
  keyed(
    'torus_actor_restarts_total',
    'counter',
    'restarts of a supervised actor on this node',
    'actor',
    input.metrics.restarts,
  );
  keyed(
    'torus_thread_heap_used_bytes',
    'gauge',
    'V8 heap in use per thread: main and each actor worker',
    'thread',
    input.metrics.threadHeapBytes ?? {},
  );
  keyed(
    'torus_thread_heap_total_bytes',
    'gauge',
    'V8 heap committed per thread (in use plus what V8 keeps for the next allocations)',
    'thread',
    input.metrics.threadHeapTotalBytes ?? {},
  );
  keyed(
    'torus_thread_heap_live_bytes',
    'gauge',
    "V8 heap in use just after a thread's last full collection: what its live objects hold (a leak shows here)",
    'thread',
    input.metrics.threadHeapLiveBytes ?? {},
  );
  keyed(
    'torus_thread_idle_collections_total',
    'counter',
    'full collections a thread ran because it had gone --idle-gc-minutes without one (its garbage back to the OS)',
    'thread',
    input.metrics.threadIdleCollections ?? {},
  );
  keyed(
    'torus_thread_heap_limit_bytes',
    'gauge',
    "the most a thread's V8 heap may grow to: its budget (--actor-heap) or V8's default",
    'thread',
    input.metrics.threadHeapLimitBytes ?? {},
  );
  keyed(
    'torus_thread_external_bytes',
    'gauge',
    'memory outside the V8 heap held by JS objects (Buffers, ArrayBuffers), per thread',
    'thread',
    input.metrics.threadExternalBytes ?? {},
  );
  keyed(
    'torus_thread_malloced_bytes',
    'gauge',
    "what V8 itself has malloc'ed outside the heap, per thread",
    'thread',
    input.metrics.threadMallocedBytes ?? {},
  );
  const unanswered = input.metrics.threadsUnanswered ?? {};
  const threads = [
    ...new Set([...Object.keys(input.metrics.threadHeapBytes ?? {}), ...Object.keys(unanswered)]),
  ].sort();
  family(
    'torus_thread_metrics_answered',
    'gauge',
    'whether a thread answered this scrape (1) or not (0: busy past the timeout, restarting): its figures above are then missing, not zero',
    threads.map((thread) =>
      series('torus_thread_metrics_answered', { thread }, Object.hasOwn(unanswered, thread) ? 0 : 1),
    ),
  );
  keyed(
    'torus_thread_metrics_unanswered_total',
    'counter',
    'scrapes a thread did not answer in time, since the node started',
    'thread',
    input.metrics.threadUnansweredTotal ?? {},
  );
  keyed(
    'torus_cluster_actor_unavailable_total',
    'counter',
    "questions about this node's role its cluster actor did not answer (the role then reads unknown), by error code",
    'code',
    input.metrics.clusterActorUnavailable ?? {},
  );
  keyed(
    'torus_runner_log_dropped_bytes_total',
    'counter',
    'runner output that could not be written to its log files (a write error), bytes by stream',
    'stream',
    input.metrics.runnerLogDroppedBytes ?? {},
  );
  if (input.metrics.damagedArtifacts !== undefined)
    family(
      'torus_artifacts_damaged',
      'gauge',
      "artifacts in this node's store whose manifest does not verify (listed as damaged, not served)",
      [series('torus_artifacts_damaged', {}, input.metrics.damagedArtifacts)],
    );
  keyed(
    'torus_limit_rejections_total',
    'counter',
    'connections or requests refused at a limit (--max-http-connections, --max-sse-clients, --max-write-rate ...)',
    'limit',
    input.limitRejections ?? {},
  );
  if (input.process) renderProcessMetrics(out, input.process);
  return out.text();
}
