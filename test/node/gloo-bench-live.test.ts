// The pure parts of the live Gloo comparison (src/bench/live/gloo-bench-live.ts): the up-front --allow-exec check of
// POST /v1/bench/ring with gloo: true, and the ring ÷ Gloo pairing the result, the CLI and the dashboard read.
// The whole path runs in test/e2e/bench-live-gloo-lab.test.ts.
import t from 'tap';
import { renderSideBySide } from '../../src/cli/bench-gloo-live.js';
import type { TorusError } from '../../src/protocols/errors.js';
import { applyEvents } from '../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../src/actors/topology-keeper/state.js';
import { compareWithGloo, glooRefusal } from '../../src/bench/live/gloo-bench-live.js';
import type { ClusterEvent } from '../../src/protocols/events.js';
import { indexed, joined, profile } from '../fixtures/topology/events.js';

/** Nodes a, b, c with the given exec policies (undefined: no profile advertised yet). */
function cluster(policies: Record<string, boolean | string[] | undefined>): ClusterState {
  const events: ClusterEvent[] = [];
  for (const [n, allowExec] of Object.entries(policies)) {
    events.push(joined(n));
    if (allowExec !== undefined)
      events.push({ ...profile(n, `10.77.0.${events.length}`), runners: { allowExec, maxRunners: 8 } } as ClusterEvent);
  }
  return applyEvents(emptyState, indexed(events, 1));
}

t.test('glooRefusal: every bench node must admit the interpreter, else 409 naming the refusing ones', async (t) => {
  const state = cluster({ a: ['python3'], b: ['/usr/bin/python3'], c: false, d: undefined });
  t.doesNotThrow(() => glooRefusal(state, ['a', 'b'], '/usr/bin/python3'), 'allowed by basename and by absolute path');
  const refused = (nodes: string[], python: string): TorusError => {
    try {
      glooRefusal(state, nodes, python);
    } catch (error) {
      return error as TorusError;
    }
    throw new Error('expected a refusal');
  };
  const off = refused(['a', 'c'], '/usr/bin/python3');
  t.equal(off.code, 'TORUS_PLACEMENT_REFUSED');
  t.match(off.message, /c \(host-c\) refuses exec: exec is off \(no --allow-exec\)/, off.message);
  t.notMatch(off.message, /\ba refuses/, 'only the refusing node is named');
  t.match(
    refused(['a', 'd'], '/usr/bin/python3').message,
    /d \(host-d\) has not advertised an exec policy/,
    'a node that never said allows nothing',
  );
  t.match(
    refused(['a', 'b'], '/opt/py/python3.12').message,
    /python3\.12.*not allowed by --allow-exec=python3/,
    'another interpreter is refused',
  );
  t.doesNotThrow(
    () => glooRefusal(state, ['a'], '/opt/venv/bin/python3'),
    'a bare entry admits any …/python3 (as for any exec job: list the path to pin it)',
  );
});

t.test(
  "compareWithGloo pairs the ring's all-reduce rows with Gloo's by size; renderSideBySide prints them or why not",
  async (t) => {
    const ring = [
      { op: 'all-reduce', size: 8, busbw: 0.5 },
      { op: 'all-reduce', size: 16, busbw: 0.9 },
      { op: 'all-gather', size: 8, busbw: 2 },
      { op: 'all-reduce', size: 32, busbw: 1 },
    ];
    const row = (bytes: number, busbw: number) => ({ bytes, busbw, timeUs: 1, medianUs: 1, p99Us: 1 });
    const gloo = {
      ok: true as const,
      python: '/usr/bin/python3',
      torch: '1.13',
      iface: 'lan0',
      rows: [row(8, 0.25), row(16, 0), row(64, 1)],
    };
    const pairs = compareWithGloo(ring, gloo);
    t.same(
      pairs,
      [
        { size: 8, ringBusbw: 0.5, glooBusbw: 0.25, ratio: 2 },
        { size: 16, ringBusbw: 0.9, glooBusbw: 0, ratio: null },
      ],
      'sizes both timed, all-reduce only; no ratio over a zero',
    );
    t.same(compareWithGloo(ring, { ok: false, reason: 'no torch' }), [], 'nothing without a Gloo run');
    const table = renderSideBySide(gloo, pairs);
    t.match(table, /ring vs torch Gloo all_reduce on the same nodes \(a torus job; lan0\)/);
    t.match(table, /8\s+0\.500\s+0\.250\s+2\.00×/);
    t.match(table, /16\s+0\.900\s+0\.000\s+-/);
    t.equal(
      renderSideBySide({ ok: false, reason: 'torch Gloo run failed: rank 2: unreachable' }, []),
      '# torch Gloo run failed: rank 2: unreachable\n',
    );
  },
);
