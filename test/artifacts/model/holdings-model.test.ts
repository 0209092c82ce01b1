import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { HoldingsSync, type LocalHolding } from '../../../src/artifacts/holdings-sync.js';
import { readModelDir } from '../../../src/artifacts/model/model-reader.js';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../../src/actors/topology-keeper/state.js';
import type { ClusterEvent } from '../../../src/protocols/events.js';

const ART = 'ef'.repeat(32);

t.test('the holdings sync sends a model record while the state has none, and only then', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-holdings-model-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  makeModel({ out: dir, bytes: 2 ** 20, layers: 2, shards: 1 });
  const model = (await readModelDir(dir))!.model!;
  // the real state and apply; proposals are applied at once, as a one-node cluster would
  let state: ClusterState = applyEvents(emptyState, [
    {
      index: 1,
      term: 1,
      event: { type: 'NodeJoined', nodeId: 'a', name: 'a', incarnation: 1, apiPort: 1, apiAddresses: [], version: 't' },
    },
  ]);
  const proposed: ClusterEvent[] = [];
  const cluster = {
    state: async () => state,
    propose: async (event: ClusterEvent) => {
      proposed.push(event);
      state = applyEvents(state, [{ index: state.lastIndex + 1, term: 1, event }]);
    },
    // proposals are applied at once, so what a sync waits for is already in the state, or never will be
    until: async (done: (s: ClusterState) => boolean, _timeoutMs: number, onTimeout: () => Error) => {
      if (!done(state)) throw onTimeout();
    },
  };
  let local: LocalHolding[] = [{ id: ART, name: 'm', bytes: 100, chunks: 2, have: 2, model }];
  const sync = new HoldingsSync('a', cluster, () => local, 60_000, 0);
  t.teardown(() => sync.close());
  await sync.syncNow();
  t.same(
    proposed.map((e) => e.type === 'ArtifactHeld' && e.model),
    [model],
    'the first announcement carries it',
  );
  t.same(state.artifacts![ART]!.model, model);
  await sync.syncNow();
  t.equal(proposed.length, 1, 'nothing more to say while the state has it');

  // the state lost the record (a new cluster, the artifact held elsewhere first): it is sent again
  state = { ...state, artifacts: { [ART]: { ...state.artifacts![ART]!, model: undefined } } };
  delete (state.artifacts![ART] as { model?: unknown }).model;
  await sync.syncNow();
  t.equal(proposed.length, 2);
  t.same((proposed[1] as { model?: unknown }).model, model, 'the holding is re-sent with the record');

  // a plain artifact never carries one
  local = [{ id: 'aa'.repeat(32), name: 'p', bytes: 1, chunks: 1, have: 1 }];
  await sync.syncNow();
  const plain = proposed.find((e) => e.type === 'ArtifactHeld' && e.artifactId === 'aa'.repeat(32));
  t.ok(plain && !('model' in plain), 'the plain holding has no model field');
});
