/**
 * A gate that holds its answer (the node's, GATE_HOLD_MS) answers `ready` on the completion itself: one ask
 * covers the stage's transfer and its shard directory's build, where a gate that answers at once says `waiting`
 * and the runner waits for the supervisor's next ask. A gate that holds still answers `waiting` when nothing
 * changes within the hold, and a failure at once.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { RunnerArtifactGate } from '../../../src/artifacts/runner-gate.js';
import { anyChanged, ChangeSignal } from '../../../src/artifacts/change-signal.js';
import { startNodes, type TestNode } from '../fixtures.js';

t.test(
  'a holding gate answers ready in the ask during which the stage arrived and its directory was built',
  async (t) => {
    const src = mkdtempSync(join(tmpdir(), 'torus-gate-hold-'));
    t.teardown(() => rmSync(src, { recursive: true, force: true }));
    makeModel({ out: join(src, 'm'), bytes: 4 * 2 ** 20, layers: 4, shards: 2, seed: 'hold' });
    const { nodes } = await startNodes(t, 2);
    const [n0, n1] = nodes as [TestNode, TestNode];
    const added = await n0.service.store.add(join(src, 'm'), { name: 'tiny' });
    await n0.service.announce(added.id);
    const stage = { fromLayer: 2, toLayer: 4 };
    const request = { instanceId: 'job', artifacts: [], order: ['n0', 'n1'], model: { id: added.id, stage } };

    const gate = new RunnerArtifactGate(n1.service, n1.id, { holdMs: 120_000 });
    const answer = await gate.prepare(request);
    t.equal(answer.state, 'ready', 'one ask: the transfer ended and the directory was built while it was held');
    t.match(answer, { env: { TORUS_MODEL_DIR: /layers-2-4$/ } });
    t.equal(n1.service.transfer(added.id)?.state, 'complete');

    // Nothing to wait for on a node with no holder reachable: the failure comes back at once, not after the hold.
    const { nodes: lone } = await startNodes(t, 1, { stallMs: 500 });
    const orphan = new RunnerArtifactGate(lone[0]!.service, lone[0]!.id, { holdMs: 120_000 });
    t.match(await orphan.prepare({ instanceId: 'job2', artifacts: [added.id], order: ['n0'] }), {
      state: 'failed',
      reason: /no other node holds/,
    });
  },
);

t.test('change signal: a change before the wait is seen, a wait that times out leaves no waiter', async (t) => {
  const s = new ChangeSignal();
  const v = s.version;
  s.bump();
  t.equal(await s.changedSince(v, 10_000), true, 'bumped between reading the version and waiting: no wait');
  const w = s.version;
  t.equal(await s.changedSince(w, 1), false, 'nothing changed: false after the wait');
  const pending = s.changedSince(w, 10_000);
  s.bump();
  t.equal(await pending, true, 'woken by the bump');
  const other = new ChangeSignal();
  const both = anyChanged(
    [
      [s, s.version],
      [other, other.version],
    ],
    600_000,
  );
  other.bump();
  t.equal(await both, true, 'either signal wakes a wait on both (and its timer goes: this test ends at once)');
});
