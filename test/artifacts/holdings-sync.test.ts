/**
 * The holdings sync when a user's command asks for one while a periodic one runs: that run may have read the
 * store before the artifact the user just added, so the command's sync waits for it and runs again; and its
 * failure (no leader) reaches the command instead of being logged away.
 */
import t from 'tap';
import { HoldingsSync, type LocalHolding } from '../../src/artifacts/holdings-sync.js';
import type { ClusterEvent } from '../../src/protocols/events.js';
import { TorusError } from '../../src/protocols/errors.js';
import { SharedState } from './fixtures.js';

const holding = (id: string): LocalHolding => ({ id, name: id, bytes: 10, chunks: 1, have: 1 });
const ID_A = 'a'.repeat(64);
const ID_B = 'b'.repeat(64);
const JOINED: ClusterEvent = {
  type: 'NodeJoined',
  nodeId: 'n0',
  name: 'n0',
  incarnation: 1,
  apiPort: 52515,
  apiAddresses: [{ ip: '127.0.0.1', port: 52515 }],
  version: 'test',
};

function cluster(shared: SharedState) {
  let hold: Promise<void> | undefined;
  let fail: TorusError | undefined;
  const proposed: string[] = [];
  return {
    proposed,
    /** The next proposals wait for `gate` (a leader slow to commit). */
    holdUntil(gate: Promise<void>) {
      hold = gate;
    },
    failWith(error: TorusError | undefined) {
      fail = error;
    },
    port: {
      state: async () => shared.state,
      propose: async (event: ClusterEvent) => {
        if (fail) throw fail;
        await hold;
        proposed.push(event.type === 'ArtifactHeld' ? event.artifactId : event.type);
        shared.apply(event);
      },
      until: async () => {},
    },
  };
}

t.test('a sync asked for during a running one runs again after it, with what the store holds now', async (t) => {
  const shared = new SharedState();
  shared.apply(JOINED);
  const c = cluster(shared);
  const store: LocalHolding[] = [holding(ID_A)];
  const sync = new HoldingsSync('n0', c.port, () => [...store]);
  let open!: () => void;
  c.holdUntil(new Promise<void>((resolve) => (open = resolve)));
  const periodic = sync.syncNow(); // reads the store (A only), then waits on the leader
  await new Promise((r) => setImmediate(r));
  store.push(holding(ID_B)); // `artifacts add` wrote B meanwhile
  let answered = false;
  const command = sync.syncOrThrow().then(() => {
    answered = true;
  });
  await new Promise((r) => setTimeout(r, 20));
  t.notOk(answered, 'the command waits for the running sync instead of returning at once');
  open();
  await Promise.all([periodic, command]);
  t.same(c.proposed, [ID_A, ID_B], 'and its own run announced B');
  t.ok(shared.state.artifacts?.[ID_B]?.holders.n0, 'B is in the state');
});

t.test('a failed sync fails the command that asked for it; the periodic one only reports it', async (t) => {
  const shared = new SharedState();
  shared.apply(JOINED);
  const c = cluster(shared);
  const errors: unknown[] = [];
  const sync = new HoldingsSync(
    'n0',
    c.port,
    () => [holding(ID_A)],
    2000,
    10_000,
    (e) => errors.push(e),
  );
  c.failWith(new TorusError('TORUS_NO_LEADER', 'no leader'));
  await t.rejects(sync.syncOrThrow(), { code: 'TORUS_NO_LEADER' });
  await sync.syncNow();
  t.equal(errors.length, 1, 'the background sync logged its failure');
  c.failWith(undefined);
  await sync.syncOrThrow();
  t.same(c.proposed, [ID_A], 'proposed again once the leader is back');
});
