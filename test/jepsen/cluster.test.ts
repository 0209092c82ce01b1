/**
 * Jepsen-style check, short schedule: 5 real cluster processes in lab namespaces, 4 seeded faults
 * (isolate the leader, cut 2 of 5 off, flap a link, kill -9 and restart a node) while one client per node writes;
 * then every acknowledged write must be on every node, committed logs agree, no term had two leaders, one digest.
 * Replay a failure with TORUS_JEPSEN_SEED=<seed>. The long schedule: benchmarks/jepsen-soak.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { check } from './checker.js';
import { runJepsen } from './run.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.test('the checker finds what it must (it can fail)', async (t) => {
  const node = (name: string, instances: string[], committed: [number, string][], terms: number[], digest = 'd') => ({
    name,
    instances,
    digest,
    committed: new Map(committed),
    leaderTerms: terms,
  });
  const ok = check(
    [{ op: 'create', id: 'x', at: 1 }],
    [node('a', ['x'], [[1, 'e1']], [1]), node('b', ['x'], [[1, 'e1']], [])],
  );
  t.ok(ok.ok, JSON.stringify(ok.problems));
  const bad = check(
    [
      { op: 'create', id: 'x', at: 1 },
      { op: 'create', id: 'y', at: 2 },
      { op: 'delete', id: 'y', at: 3 },
    ],
    [
      node(
        'a',
        ['y'],
        [
          [1, 'e1'],
          [2, 'e2'],
        ],
        [1, 2],
      ),
      node(
        'b',
        ['x', 'y'],
        [
          [1, 'e1'],
          [2, 'other'],
        ],
        [2],
        'e',
      ),
    ],
  );
  t.match(bad.problems, [
    /a: acknowledged create of x is missing/,
    /a: acknowledged delete of y did not hold/,
    /b: acknowledged delete of y/,
    /committed entry 2 differs/,
    /term 2 had two leaders/,
    /digests differ/,
  ]);
  const blind = check(
    [{ op: 'create', id: 'x', at: 1 }],
    [node('a', ['x'], [], []), node('b', ['x'], [[1, 'e1']], [])],
  );
  t.same(
    blind.problems,
    [
      'a: no committed entry in its log (nothing to compare)',
      'no node claimed to lead (nothing to check for two leaders)',
    ],
    'an empty log or no leader claim is a problem, not a clean pass',
  );
});

const why = Lab.unavailableReason();
t.test(
  'short seeded fault schedule on 5 real nodes: no acknowledged write lost',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    const seed = Number(process.env.TORUS_JEPSEN_SEED ?? 13);
    await withLab(t, { hosts: 5 }, async (lab) => {
      const r = await runJepsen(lab, { seed, hosts: 5, faults: 4, gapMs: 9000, log: (l) => t.comment(l) });
      t.comment(
        `seed ${r.seed}: ${r.attempted} writes attempted, ${r.stats.acked} acknowledged (${r.stats.creates} creates, ${r.stats.deletes} deletes), ${r.stats.terms} terms with a leader`,
      );
      t.same(r.problems, [], `no violation (replay with TORUS_JEPSEN_SEED=${r.seed})`);
      t.ok((r.stats.acked ?? 0) > 10, 'the clients got writes acknowledged through the faults');
    });
  },
);
