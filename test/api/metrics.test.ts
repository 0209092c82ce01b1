import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { raw, sendJson, startApi } from './fixtures/harness.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';
import { renderMetrics } from '../../src/api/prometheus.js';

const workload = { id: 'w', memoryBytes: 1024, layers: 3 };
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtoolMissing = promtool.error
  ? 'promtool is missing (apt-get install -y prometheus; the Debian package prometheus ships it)'
  : undefined;

/** Every sample of `name` (any labels) as [labels text, value]. */
function samples(text: string, name: string): Array<[string, number]> {
  return text.split('\n').flatMap((line) => {
    const m = line.match(/^(\w+)(\{.*\})? (\S+)$/);
    return m && m[1] === name ? [[m[2] ?? '', Number(m[3] === '+Inf' ? Infinity : m[3])] as [string, number]] : [];
  });
}
const value = (text: string, name: string): number | undefined => samples(text, name)[0]?.[1];

t.test(
  'the whole /metrics output passes `promtool check metrics`',
  { skip: skipOrFail(promtoolMissing) },
  async (t) => {
    const { api, node } = await startApi(t);
    // Every family with samples: an instance with runners, a restart, and label values that need escaping.
    await sendJson(api.url, 'POST', '/v1/instances', { workload, instanceId: 'inst-x' });
    node.apply({
      type: 'NodeJoined',
      nodeId: 'node-q',
      name: 'quote " back\\slash\nnewline',
      incarnation: 1,
      apiPort: 1,
      apiAddresses: [],
      version: '0.1.0',
    });
    node.restarts['odd "actor"'] = 2;
    const res = await raw(api.url, 'GET', '/metrics');
    t.equal(res.status, 200);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: res.text, encoding: 'utf8' });
    t.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}`);
    t.equal(check.stdout + check.stderr, '', 'no lint findings');
    t.match(res.text, /^torus_actor_restarts_total\{actor="odd \\"actor\\""\} 2$/m, 'label values escaped');
    t.match(res.text, /^# TYPE torus_thread_idle_collections_total counter$/m, 'idle collections: a counter');
    t.match(res.text, /^torus_thread_idle_collections_total\{thread="main"\} \d+$/m, 'per thread');
    const limit = value(res.text, 'torus_thread_heap_limit_bytes');
    t.ok(
      limit !== undefined && limit >= value(res.text, 'torus_thread_heap_total_bytes')!,
      'a thread heap limit, above its committed heap',
    );
  },
);

t.test(
  'what went wrong without an answer: unanswered threads, the cluster actor, dropped runner output, damaged artifacts',
  { skip: skipOrFail(promtoolMissing) },
  async (t) => {
    const text = renderMetrics({
      node: { id: 'n', name: 'n', version: '0.1.0', incarnation: 1, uptimeMs: 1, role: 'unknown' },
      lastIndex: 0,
      topology: { nodes: [], links: [] },
      instances: [],
      metrics: {
        restarts: { 'placement-planner': 0 },
        threadHeapBytes: { main: 100 },
        threadsUnanswered: { 'placement-planner': 'TORUS_ACTOR_TIMEOUT: request heap timed out after 1000 ms' },
        threadUnansweredTotal: { main: 0, 'placement-planner': 3 },
        clusterActorUnavailable: { TORUS_ACTOR_TIMEOUT: 2, TORUS_ACTOR_STOPPED: 1 },
        runnerLogDroppedBytes: { stdout: 4096, stderr: 0 },
        damagedArtifacts: 1,
      },
    });
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    t.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}`);
    t.equal(check.stdout + check.stderr, '', 'no lint findings');
    t.same(samples(text, 'torus_thread_metrics_answered'), [
      ['{thread="main"}', 1],
      ['{thread="placement-planner"}', 0],
    ]);
    t.equal(value(text, 'torus_artifacts_damaged'), 1);
    t.match(text, /^torus_cluster_actor_unavailable_total\{code="TORUS_ACTOR_STOPPED"\} 1$/m);
    t.match(text, /^torus_runner_log_dropped_bytes_total\{stream="stdout"\} 4096$/m);
    t.match(text, /^torus_node_info\{[^}]*role="unknown"/m);
  },
);

t.test('process and Node.js runtime metrics under their conventional names, with sane values', async (t) => {
  const { api } = await startApi(t);
  const text = (await raw(api.url, 'GET', '/metrics')).text;
  for (const name of [
    'process_cpu_user_seconds_total',
    'process_cpu_system_seconds_total',
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'process_start_time_seconds',
    'nodejs_heap_size_total_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_external_memory_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_eventloop_lag_p50_seconds',
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_version_info',
  ]) {
    t.match(text, new RegExp(`^# TYPE ${name} (gauge|counter)$`, 'm'), `${name} declared`);
    t.equal(samples(text, name).length, 1, `${name}: one sample`);
  }
  t.match(text, /^# TYPE process_cpu_seconds_total counter$/m);
  t.ok(value(text, 'process_cpu_seconds_total')! > 0);
  t.ok(
    Math.abs(
      value(text, 'process_cpu_seconds_total')! -
        value(text, 'process_cpu_user_seconds_total')! -
        value(text, 'process_cpu_system_seconds_total')!,
    ) < 1e-6,
    'cpu total = user + system',
  );
  const rss = process.memoryUsage.rss();
  t.ok(
    value(text, 'process_resident_memory_bytes')! > rss / 4 && value(text, 'process_resident_memory_bytes')! < rss * 4,
    'RSS of this process',
  );
  t.ok(value(text, 'nodejs_heap_size_used_bytes')! <= value(text, 'nodejs_heap_size_total_bytes')!);
  const start = value(text, 'process_start_time_seconds')!;
  t.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 5, 'start time is this process start');
  t.same(samples(text, 'nodejs_version_info'), [
    [
      `{version="${process.version}",major="${process.versions.node.split('.')[0]}",minor="${process.versions.node.split('.')[1]}",patch="${process.versions.node.split('.')[2]}"}`,
      1,
    ],
  ]);
  t.ok(
    samples(text, 'nodejs_active_resources').some(([labels, n]) => labels === '{type="TCPServerWrap"}' && n >= 1),
    'the listening API socket is an active resource',
  );
  if (process.platform === 'linux') {
    const fds = readdirSync('/proc/self/fd').length - 1;
    t.ok(Math.abs(value(text, 'process_open_fds')! - fds) <= 8, `open fds ${value(text, 'process_open_fds')} ≈ ${fds}`);
    t.ok(value(text, 'process_max_fds')! >= value(text, 'process_open_fds')!);
    t.ok(value(text, 'process_heap_bytes')! > 0);
    t.ok(value(text, 'process_virtual_memory_bytes')! >= value(text, 'process_resident_memory_bytes')!);
  }
});

t.test('a blocked event loop shows in the delay percentiles of the next scrape, and only that one', async (t) => {
  const { api } = await startApi(t);
  await raw(api.url, 'GET', '/metrics'); // closes the previous window
  await new Promise((resolve) => setTimeout(resolve, 50)); // the monitor's timer runs between the blocks
  const until = Date.now() + 600;
  while (Date.now() < until); // a 600 ms synchronous stall: what a CPU-bound handler would do
  await new Promise((resolve) => setTimeout(resolve, 50));
  const blocked = (await raw(api.url, 'GET', '/metrics')).text;
  t.ok(
    value(blocked, 'nodejs_eventloop_lag_max_seconds')! >= 0.4,
    `max ${value(blocked, 'nodejs_eventloop_lag_max_seconds')} s ≥ 0.4 s`,
  );
  t.ok(
    value(blocked, 'nodejs_eventloop_lag_p99_seconds')! >= 0.4,
    `p99 ${value(blocked, 'nodejs_eventloop_lag_p99_seconds')} s ≥ 0.4 s`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const calm = (await raw(api.url, 'GET', '/metrics')).text;
  t.ok(
    value(calm, 'nodejs_eventloop_lag_max_seconds')! < 0.4,
    `the next window no longer holds the stall (max ${value(calm, 'nodejs_eventloop_lag_max_seconds')} s)`,
  );
});
