/**
 * The log shares one store per lineage and appends in place: every log value must still read as if it were its own
 * copy. A property test keeps every version it made and drives appends, compactions and truncations from any of
 * them (old ones too), comparing each version with a plain copy-on-write model of the same operations.
 */
import t from 'tap';
import fc from 'fast-check';
import {
  appendEntries,
  chainHash,
  compactLog,
  GENESIS_HASH,
  emptyLog,
  entriesOf,
  entryAt,
  hashAt,
  lastHash,
  lastIndex,
  lastTerm,
  sizesOf,
  sliceLog,
  truncateAfter,
  type LogState,
} from '../../../../src/actors/cluster/agreement/log.js';
import type { IndexedEnvelope } from '../../../../src/protocols/peer-frames.js';

interface Model {
  readonly base: number;
  readonly baseHash: string;
  readonly entries: readonly IndexedEnvelope[];
  readonly hashes: readonly string[];
}

type Op =
  | { kind: 'append'; from: number; n: number; size: number }
  | { kind: 'compact'; from: number; retain: number; budget: number }
  | { kind: 'truncate'; from: number; keep: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    from: fc.nat(),
    n: fc.integer({ min: 1, max: 40 }),
    size: fc.integer({ min: 0, max: 300 }),
  }),
  fc.record({
    kind: fc.constant('compact' as const),
    from: fc.nat(),
    retain: fc.integer({ min: 0, max: 50 }),
    budget: fc.oneof(fc.constant(Infinity), fc.integer({ min: 200, max: 20_000 })),
  }),
  fc.record({ kind: fc.constant('truncate' as const), from: fc.nat(), keep: fc.nat({ max: 60 }) }),
);

/** Reads `log` the way the core does and checks it against the entries it must hold. */
function readsAs(log: LogState, model: Model): string | null {
  if (log.base !== model.base) return `base ${log.base} ≠ ${model.base}`;
  if (log.baseHash !== model.baseHash || hashAt(log, log.base) !== model.baseHash) return 'baseHash';
  if (lastIndex(log) !== model.base + model.entries.length) return `lastIndex ${lastIndex(log)}`;
  const held = entriesOf(log);
  if (held.length !== model.entries.length || held.some((e, i) => e !== model.entries[i])) return 'entries differ';
  for (let i = 0; i < model.entries.length; i++) {
    const index = model.base + i + 1;
    if (entryAt(log, index) !== model.entries[i]) return `entryAt ${index}`;
    if (hashAt(log, index) !== model.hashes[i]) return `hashAt ${index}`;
  }
  if (entryAt(log, lastIndex(log) + 1) !== undefined) return 'an entry past the end';
  if (hashAt(log, lastIndex(log) + 1) !== undefined) return 'a hash past the end';
  if (model.entries.length > 0 && lastTerm(log) !== model.entries.at(-1)!.term) return 'lastTerm';
  if (model.entries.length > 0 && lastHash(log) !== model.hashes.at(-1)) return 'lastHash';
  const slice = sliceLog(log, model.base + 1, lastIndex(log));
  if (slice === null || slice.length !== model.entries.length) return 'sliceLog';
  if (log.bytes !== sizesOf(log).reduce((a, b) => a + b, 0)) return 'bytes ≠ the sum of the sizes';
  return null;
}

t.test('every version reads as its own copy, whatever is done from older ones', async (t) => {
  let term = 1;
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 80 }), (ops) => {
      const versions: { log: LogState; model: Model }[] = [
        { log: emptyLog, model: { base: 0, baseHash: GENESIS_HASH, entries: [], hashes: [] } },
      ];
      for (const o of ops) {
        const v = versions[o.from % versions.length]!;
        let next: { log: LogState; model: Model };
        if (o.kind === 'append') {
          term += 1;
          const first = lastIndex(v.log) + 1;
          const added = Array.from(
            { length: o.n },
            (_, k): IndexedEnvelope => ({
              index: first + k,
              term,
              event: { type: 'T', pad: 'x'.repeat(o.size), k },
            }),
          );
          const log = appendEntries(v.log, added);
          const hashes = [...v.model.hashes];
          for (const e of added) hashes.push(chainHash(hashes.at(-1) ?? v.model.baseHash, e));
          next = { log, model: { ...v.model, entries: [...v.model.entries, ...added], hashes } };
        } else if (o.kind === 'compact') {
          const log = compactLog(v.log, lastIndex(v.log), o.retain, o.budget);
          const drop = log.base - v.model.base;
          next = {
            log,
            model: {
              base: log.base,
              baseHash: drop > 0 ? v.model.hashes[drop - 1]! : v.model.baseHash,
              entries: v.model.entries.slice(drop),
              hashes: v.model.hashes.slice(drop),
            },
          };
          // What this log keeps in memory (its store up to its end: entries past it are newer logs'): within the budget.
          const inMemory = log.store.sizes.slice(0, log.start + log.count).reduce((x, y) => x + y, 0);
          if (o.budget !== Infinity && inMemory > Math.max(o.budget, log.bytes))
            throw new Error(`folded entries kept in memory past the byte budget: ${inMemory} > ${o.budget}`);
        } else {
          const index = v.model.base + Math.min(o.keep, v.model.entries.length);
          const log = truncateAfter(v.log, index);
          const keep = index - v.model.base;
          next = {
            log,
            model: { ...v.model, entries: v.model.entries.slice(0, keep), hashes: v.model.hashes.slice(0, keep) },
          };
        }
        versions.push(next);
        for (const [i, w] of versions.entries()) {
          const wrong = readsAs(w.log, w.model);
          if (wrong) throw new Error(`version ${i} after ${JSON.stringify(o)}: ${wrong}`);
        }
      }
    }),
    { seed: 23, numRuns: 150 },
  );
  t.pass('150 random histories: every version read as its own copy');
});

t.test('an append from the newest log is in place; from an older or a truncated one, on a copy', async (t) => {
  const entry = (index: number): IndexedEnvelope => ({ index, term: 1, event: { type: 'T', index } });
  const a = appendEntries(emptyLog, [entry(1), entry(2)]);
  const b = appendEntries(a, [entry(3)]);
  t.equal(b.store, a.store, 'the newest log grows its store in place');
  t.equal(lastIndex(a), 2, 'the older log still ends at 2');
  const fork = appendEntries(a, [{ index: 3, term: 2, event: { type: 'Other' } }]);
  t.not(fork.store, a.store, 'a second append from the older log copies');
  t.equal(entryAt(b, 3)!.event.type, 'T', 'and the newer log keeps its own entry 3');
  t.equal(entryAt(fork, 3)!.event.type, 'Other');
  const cut = truncateAfter(b, 1);
  const regrown = appendEntries(cut, [{ index: 2, term: 3, event: { type: 'New' } }]);
  t.equal(entryAt(b, 2)!.event.type, 'T', 'a truncated log that grows again leaves the original alone');
  t.equal(entryAt(regrown, 2)!.event.type, 'New');
  t.equal(emptyLog.store.entries.length, 0, 'the shared empty log stays empty');
});

t.test('folded entries leave memory once they are as many as those held', async (t) => {
  let log = emptyLog;
  let largest = 0;
  for (let i = 1; i <= 5000; i++) {
    log = compactLog(appendEntries(log, [{ index: i, term: 1, event: { type: 'T', i } }]), i, 100);
    largest = Math.max(largest, log.store.entries.length);
  }
  t.equal(log.count, 100, '100 retained');
  t.ok(largest <= 2 * 100 + 1, `the store never held more than ${largest} entries`);
});
