// Fuzz: random and mutated inputs never make a decoder throw anything but ValidationError, whatever decodes is
// a fixed point of the decoder, and applying any decoded event to a rich state never throws.
import t from 'tap';
import { ValidationError } from '../../../src/protocols/errors.js';
import { decodeClusterEvent, decodeCommand, decodeIndexedEvent } from '../../../src/protocols/events.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/actors/topology-keeper/snapshot.js';
import { applyEvent, applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import { everyEvent, indexed } from '../../fixtures/topology/events.js';

let seed = 12345;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const strings = [
  '',
  'a',
  'b',
  'inst-1',
  't1',
  '__proto__',
  'constructor',
  '10.77.0.2',
  '::1',
  'x'.repeat(5000),
  'Ready',
  'ring',
  'exec',
  'ethernet',
  'NodeGone',
  'LinkUp',
];
function randomValue(depth = 3): unknown {
  const r = rand();
  if (depth <= 0 || r < 0.5) {
    return pick<unknown>([
      null,
      undefined,
      true,
      false,
      0,
      -1,
      1.5,
      2 ** 60,
      NaN,
      Infinity,
      pick(strings),
      new Date(0),
      new Map(),
      new Uint8Array(2),
      Symbol('s'),
      () => 1,
    ]);
  }
  if (r < 0.7) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth - 1));
  const o: Record<string, unknown> = {};
  for (let i = 0; i < rand() * 4; i++)
    o[pick(['type', 'nodeId', 'instance', 'event', 'index', 'term', ...strings])] = randomValue(depth - 1);
  return o;
}

function mutate(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== 'object' || (depth > 0 && rand() < 0.3)) return randomValue(2);
  if (Array.isArray(v)) {
    const copy = [...v];
    if (copy.length && rand() < 0.5)
      copy[Math.floor(rand() * copy.length)] = mutate(copy[Math.floor(rand() * copy.length)], depth + 1);
    else copy.push(randomValue(1));
    return copy;
  }
  const copy: Record<string, unknown> = { ...(v as Record<string, unknown>) };
  const keys = Object.keys(copy);
  const r = rand();
  if (r < 0.2 && keys.length) delete copy[pick(keys)];
  else if (r < 0.3) copy[pick(strings) || 'extra'] = randomValue(1);
  else if (keys.length) {
    const k = pick(keys);
    copy[k] = mutate(copy[k], depth + 1);
  }
  return copy;
}

const hostile = new Proxy(
  {},
  {
    get() {
      throw new Error('getter bomb');
    },
    ownKeys() {
      throw new Error('keys bomb');
    },
  },
);

t.test('decoders only ever throw ValidationError', async (t) => {
  const rich = applyEvents(emptyState, indexed(everyEvent.slice(0, 12)));
  let decoded = 0;
  let applied = 0;
  let other = 0;
  const inputs: unknown[] = [hostile, Object.create(null), [], 'x', 1];
  for (let i = 0; i < 4000; i++) inputs.push(i % 2 ? randomValue(4) : mutate(pick(everyEvent)));
  for (const input of inputs) {
    for (const decode of [
      decodeClusterEvent,
      decodeCommand,
      (v: unknown) => decodeIndexedEvent({ index: 1, term: 1, event: v }),
    ]) {
      let value: unknown;
      try {
        value = decode(input);
      } catch (error) {
        if (!(error instanceof ValidationError)) {
          other++;
          t.fail(`non-ValidationError: ${String(error)} for ${String(JSON.stringify(input))?.slice(0, 200)}`);
        }
        continue;
      }
      decoded++;
      if (decode !== decodeClusterEvent) continue;
      t.same(decodeClusterEvent(JSON.parse(JSON.stringify(value))), value, 'decoded events are fixed points');
      // What decodes is an event the state takes: applying it must not throw, not even a ValidationError.
      try {
        applyEvent(rich, { index: rich.lastIndex + 1, term: 1, event: value as never });
        applied++;
      } catch (error) {
        t.fail(`applyEvent threw ${String(error)} for ${String(JSON.stringify(value))?.slice(0, 200)}`);
      }
    }
  }
  t.equal(other, 0);
  t.ok(decoded > 50, `some mutants are valid events (${decoded})`);
  t.ok(applied > 25, `valid events were applied (${applied})`);
});

t.test('snapshot decoder only ever throws ValidationError', async (t) => {
  const snap = JSON.parse(JSON.stringify(encodeSnapshot(applyEvents(emptyState, indexed(everyEvent.slice(0, 12))))));
  let refused = 0;
  let other = 0;
  for (let i = 0; i < 1500; i++) {
    let input: unknown = snap;
    for (let k = 0; k < 3; k++) input = mutate(input);
    try {
      decodeSnapshot(input);
    } catch (error) {
      if (error instanceof ValidationError) refused++;
      else {
        other++;
        t.fail(`non-ValidationError: ${String(error)}`);
      }
    }
  }
  t.equal(other, 0, 'no other error');
  t.ok(refused > 100, `mutants were refused with a ValidationError (${refused} of 1500)`);
  t.throws(() => decodeSnapshot(hostile), ValidationError);
});
