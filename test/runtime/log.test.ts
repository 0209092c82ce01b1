import t, { type Test } from 'tap';
import { createLogger, formatRecord, getLogLevel, setLogLevel, setLogSink } from '../../src/runtime/log.js';
import { DEFAULT_LOG_LIMITS, toLogValue } from '../../src/runtime/log-value.js';
import { TorusError } from '../../src/protocols/errors.js';

/** Captures the lines one logger call writes, at level debug, and restores the sink and level. */
function capture(t: Test, fn: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const level = getLogLevel();
  setLogLevel('debug');
  setLogSink((line) => lines.push(line));
  t.teardown(() => {
    setLogLevel(level);
    setLogSink((line) => process.stderr.write(`${line}\n`));
  });
  fn();
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

t.test('BigInt at any depth is written as a decimal string, not a TypeError', async (t) => {
  const [line] = capture(t, () =>
    createLogger({ component: 'x' }).warn('sizes', {
      total: 2n ** 70n,
      nested: { list: [1n, { deep: -5n }] },
      typed: new BigInt64Array([7n]),
    }),
  );
  t.equal(line!.total, '1180591620717411303424');
  t.same(line!.nested, { list: ['1', { deep: '-5' }] });
  t.same(line!.typed, { type: 'BigInt64Array', length: 1, values: ['7'] });
  t.equal(line!.component, 'x');
});

t.test('cycles become "[Circular]"; a value seen twice without a cycle is written twice', async (t) => {
  const a: Record<string, unknown> = { name: 'a' };
  a.self = a;
  const shared = { n: 1 };
  const list: unknown[] = [shared, shared];
  list.push(list);
  const [line] = capture(t, () => createLogger().error('loop', { a, list }));
  t.same(line!.a, { name: 'a', self: '[Circular]' });
  t.same(line!.list, [{ n: 1 }, { n: 1 }, '[Circular]']);
});

t.test('nested errors keep name, message, code, details, stack and the whole cause chain', async (t) => {
  const root = Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
  const middle = new TorusError('TORUS_NODE_UNKNOWN', 'peer b unreachable', { peer: 'b' }, { cause: root });
  const top = new Error('join failed', { cause: middle });
  const [line] = capture(t, () => createLogger().error('join', { err: top, wrapped: { inner: middle } }));
  const err = line!.err as Record<string, any>;
  t.equal(err.name, 'Error');
  t.equal(err.message, 'join failed');
  t.match(err.stack, /join failed\n\s+at /);
  t.equal(err.cause.name, 'TorusError');
  t.equal(err.cause.code, 'TORUS_NODE_UNKNOWN');
  t.same(err.cause.details, { peer: 'b' });
  t.match(err.cause.stack, /peer b unreachable/);
  t.same(
    { message: err.cause.cause.message, code: err.cause.cause.code, syscall: err.cause.cause.syscall },
    { message: 'ECONNRESET', code: 'ECONNRESET', syscall: 'read' },
  );
  t.equal((line!.wrapped as any).inner.code, 'TORUS_NODE_UNKNOWN', 'an error inside a plain object is not {}');
  const agg = toLogValue(new AggregateError([new Error('one'), new RangeError('two')], 'both')) as Record<string, any>;
  t.same(
    agg.errors.map((e: any) => `${e.name}: ${e.message}`),
    ['Error: one', 'RangeError: two'],
  );
});

t.test('an error whose cause points back at itself is bounded', async (t) => {
  const e = new Error('self-caused') as Error & { cause?: unknown };
  e.cause = e;
  const out = toLogValue(e) as Record<string, unknown>;
  t.equal(out.cause, '[Circular]');
});

t.test('a throwing getter, a hostile proxy and a throwing toJSON do not stop the line', async (t) => {
  const getter = {
    ok: 1,
    get bad(): number {
      throw new Error('no access');
    },
  };
  const proxy = new Proxy(
    {},
    {
      ownKeys: () => {
        throw new Error('trap');
      },
    },
  );
  const json = {
    toJSON: () => {
      throw new TypeError('nope');
    },
  };
  const fieldsWithBadGetter = Object.defineProperty({}, 'boom', {
    enumerable: true,
    get: () => {
      throw new Error('field getter');
    },
  });
  const [line, second] = capture(t, () => {
    createLogger().warn('hostile', { getter, proxy, json });
    createLogger().warn('hostile fields', fieldsWithBadGetter);
  });
  t.same(line!.getter, { ok: 1, bad: '[Thrown: Error: no access]' });
  t.equal(line!.proxy, '[Unserializable: Error: trap]');
  t.equal(line!.json, '[Unserializable: TypeError: nope]');
  t.match(second!.boom, /\[Thrown: field getter\]/);
});

t.test('Maps, Sets, Buffers, typed arrays, dates and odd numbers are written sensibly', async (t) => {
  const out = toLogValue({
    map: new Map<unknown, unknown>([
      ['a', 1],
      [2, { b: 3n }],
    ]),
    set: new Set(['x', 'y']),
    buf: Buffer.from('hello'),
    f32: new Float32Array([1.5, 2]),
    when: new Date(0),
    nan: Number.NaN,
    fn: () => 1,
    undef: undefined,
    sym: Symbol('s'),
  }) as Record<string, unknown>;
  t.same(out.map, {
    type: 'Map',
    size: 2,
    entries: [
      ['a', 1],
      [2, { b: '3' }],
    ],
  });
  t.same(out.set, { type: 'Set', size: 2, values: ['x', 'y'] });
  t.equal(out.buf, '[Buffer(5) 68656c6c6f]');
  t.same(out.f32, { type: 'Float32Array', length: 2, values: [1.5, 2] });
  t.equal(out.when, '1970-01-01T00:00:00.000Z');
  t.equal(out.nan, 'NaN');
  t.notOk('fn' in out || 'undef' in out, 'functions and undefined are left out, as JSON does');
  t.equal(out.sym, 'Symbol(s)');
});

t.test('depth, entries and size are bounded', async (t) => {
  let deep: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < 50; i++) deep = { next: deep };
  const text = JSON.stringify(toLogValue(deep));
  t.ok(text.length < 200, `deep object cut short (${text.length} chars)`);
  t.match(text, /\[Object\]/);

  const many = toLogValue(Array.from({ length: 1000 }, (_, i) => i)) as unknown[];
  t.equal(many.length, DEFAULT_LOG_LIMITS.maxEntries + 1);
  t.equal(many.at(-1), '… 900 more');

  const wide = toLogValue(Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]))) as Record<
    string,
    unknown
  >;
  t.equal(Object.keys(wide).length, DEFAULT_LOG_LIMITS.maxEntries + 1);
  t.equal(wide['…'], '400 more keys');

  const huge = JSON.stringify(
    toLogValue({ a: 'x'.repeat(1e6), b: Array.from({ length: 50 }, () => 'y'.repeat(5000)) }),
  );
  t.ok(huge.length < DEFAULT_LOG_LIMITS.maxTotalChars + 20_000, `total size bounded (${huge.length} chars)`);
  t.match(huge, /…\(\+991808 chars\)/);
});

t.test('the line is valid JSON and the line keys t/level/msg cannot be overwritten by fields', async (t) => {
  const line = JSON.parse(formatRecord('info', 'hello', { level: 'fake' }, { msg: 'fake', n: 1n })) as Record<
    string,
    unknown
  >;
  t.equal(line.level, 'info');
  t.equal(line.msg, 'hello');
  t.equal(line.n, '1');
});

t.test('child loggers with a throwing getter, and a huge Map, stay bounded and never throw', async (t) => {
  const hostile = Object.defineProperty({ ok: 1 }, 'bad', {
    enumerable: true,
    get: () => {
      throw new Error('child getter');
    },
  });
  const big = new Map(Array.from({ length: 100_000 }, (_, i) => [i, i] as const));
  const [line] = capture(t, () => createLogger({ a: 1 }).child(hostile).info('child', { big }));
  t.equal(line!.a, 1);
  t.equal(line!.ok, 1);
  t.match(line!.bad, /\[Thrown: child getter\]/);
  const map = line!.big as { size: number; entries: unknown[] };
  t.equal(map.size, 100_000);
  t.equal(map.entries.length, DEFAULT_LOG_LIMITS.maxEntries + 1);
  t.equal(map.entries.at(-1), `… ${100_000 - DEFAULT_LOG_LIMITS.maxEntries} more`);
});
