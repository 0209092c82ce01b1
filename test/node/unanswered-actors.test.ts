/**
 * A thread that does not answer is a state the node reports, never a silent default: a busy or restarting actor is
 * missing from the /metrics sample and says so (answered 0, counted), and a cluster actor that does not answer
 * makes the node's role `unknown` with the reason, counted and logged, not `alone`. Real worker threads under the
 * runtime: the probe actor (test/runtime/fixtures) answers `role` as a cluster actor does, spins to stay busy and
 * exits to crash.
 */
import t, { type Test } from 'tap';
import { ActorNodeFacade, type FacadeContext } from '../../src/node/node-facade.js';
import { renderMetrics } from '../../src/api/prometheus.js';
import { createLogger, setLogSink } from '../../src/runtime/log.js';
import type { NodeConfig } from '../../src/node/config.js';
import type { EventFeed } from '../../src/api/event-feed.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { probeModule, testRuntime, waitFor } from '../runtime/helpers.js';

function facadeOver(runtime: Runtime): ActorNodeFacade {
  return new ActorNodeFacade({
    runtime,
    config: { cluster: 'test' } as NodeConfig,
    feed: {} as EventFeed,
    nodeId: 'n-1',
    incarnation: 1,
    name: 'h0',
    version: '0.0.0',
    startedAt: Date.now(),
    signPeer: (() => ({})) as unknown as FacadeContext['signPeer'],
    log: createLogger({ component: 'node' }),
  });
}

/** The /metrics text of what the facade answers (the parts the route gathers from the topology are empty here). */
async function scrape(facade: ActorNodeFacade): Promise<string> {
  const [node, metrics] = await Promise.all([facade.node(), facade.metrics()]);
  return renderMetrics({ node, lastIndex: 0, topology: { nodes: [], links: [] }, instances: [], metrics });
}

function captureLogs(t: Test): string[] {
  const lines: string[] = [];
  setLogSink((line) => lines.push(line));
  t.teardown(() => setLogSink((line) => process.stderr.write(`${line}\n`)));
  return lines;
}

t.test('a thread busy past the timeout is missing from the sample, and the sample says so', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'planner', module: probeModule });
  const facade = facadeOver(runtime);
  const before = await facade.metrics();
  t.ok(before.threadHeapBytes?.planner, 'an idle thread answers');
  t.same(before.threadsUnanswered, {}, 'and nobody is missing');

  const busy = runtime.request('planner', { type: 'spin', ms: 1500 }, { timeoutMs: 10_000 });
  const during = await facade.metrics();
  t.notOk(Object.hasOwn(during.threadHeapBytes ?? {}, 'planner'), 'no figure for the busy thread (not 0)');
  t.match(during.threadsUnanswered?.planner, /^TORUS_ACTOR_TIMEOUT: /, 'it is listed as unanswered, with why');
  t.equal(during.threadUnansweredTotal?.planner, 1, 'and counted');
  const text = renderMetrics({
    node: await facade.node(),
    lastIndex: 0,
    topology: { nodes: [], links: [] },
    instances: [],
    metrics: during,
  });
  t.match(text, /^torus_thread_metrics_answered\{thread="planner"\} 0$/m, '/metrics: planner did not answer');
  t.match(text, /^torus_thread_metrics_answered\{thread="main"\} 1$/m, 'main did');
  t.match(text, /^torus_thread_metrics_unanswered_total\{thread="planner"\} 1$/m, 'the count');
  t.notMatch(text, /^torus_thread_heap_used_bytes\{thread="planner"\}/m, 'no heap line for it');
  await busy;

  const after = await scrape(facade);
  t.match(after, /^torus_thread_metrics_answered\{thread="planner"\} 1$/m, 'answering again');
  t.match(after, /^torus_thread_metrics_unanswered_total\{thread="planner"\} 1$/m, 'the count stays');
});

t.test('a cluster actor that does not answer: role unknown with the reason, counted, logged once', async (t) => {
  const lines = captureLogs(t);
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'cluster', module: probeModule });
  const facade = facadeOver(runtime);
  t.match(await facade.node(), { role: 'leader', leaderId: 'probe' }, 'an answering cluster actor gives the role');
  t.notOk((await facade.node()).clusterUnavailable, 'and nothing is unavailable');

  const busy = runtime.request('cluster', { type: 'spin', ms: 2500 }, { timeoutMs: 10_000 });
  const timedOut = await facade.node();
  t.equal(timedOut.role, 'unknown', 'busy past the timeout: the role is unknown, not alone');
  t.equal(timedOut.quorum, undefined, 'no quorum is claimed');
  t.match(timedOut.clusterUnavailable, { code: 'TORUS_ACTOR_TIMEOUT', message: /role .*timed out/ }, 'and why');
  await busy;
  t.equal((await facade.node()).role, 'leader', 'answering again');

  // The exit request is answered before the thread ends, and a question that reaches the thread before its exit is
  // answered too: wait for the runtime to have seen the exit, not for the answer.
  const exited = new Promise<string>((resolve) => {
    const off = runtime.onDown((actor, reason) => {
      if (actor !== 'cluster') return;
      off();
      resolve(reason);
    });
  });
  await runtime.request('cluster', { type: 'exit' });
  t.match(await exited, /exited with code 3/, 'the runtime saw the thread end');
  const crashed = await facade.node();
  t.equal(crashed.role, 'unknown', 'crashed and not restarted yet: unknown, not the last answer (leader)');
  t.match(
    crashed.clusterUnavailable,
    { code: 'TORUS_ACTOR_FAILED', message: /restarting after: worker exited with code 3/ },
    'and why, at once',
  );
  const text = await scrape(facade);
  t.match(text, /^torus_node_info\{[^}]*role="unknown"/m, 'metrics: role unknown');
  t.match(text, /^torus_cluster_actor_unavailable_total\{code="TORUS_ACTOR_TIMEOUT"\} 1$/m, 'the timeout counted');
  t.match(text, /^torus_cluster_actor_unavailable_total\{code="TORUS_ACTOR_FAILED"\} 2$/m, 'the crash counted');

  const warned = lines.filter((l) => l.includes('the cluster actor does not answer'));
  t.equal(warned.length, 2, 'one warning per outage, not one per question');
  t.match(JSON.parse(warned[0]!), { level: 'warn', code: 'TORUS_ACTOR_TIMEOUT' });
  t.ok(
    lines.some((l) => l.includes('the cluster actor answers again')),
    'and one when it answers again',
  );
  await waitFor(() => runtime.stats().cluster?.state === 'ready', 30_000, 'the restart');
  t.equal(runtime.stats().cluster?.restarts, 1, 'restarted once');
  t.equal(runtime.downCause('cluster'), undefined, 'up again');
  t.equal((await facade.node()).role, 'leader', 'the restarted actor answers');
  t.equal(lines.filter((l) => l.includes('the cluster actor answers again')).length, 2, 'after each outage');
});

t.test('a node without a cluster actor is alone, which is no error', async (t) => {
  const { runtime } = testRuntime(t);
  const facade = facadeOver(runtime);
  const node = await facade.node();
  t.equal(node.role, 'alone');
  t.notOk(node.clusterUnavailable);
  t.same((await facade.metrics()).clusterActorUnavailable, {});
});
