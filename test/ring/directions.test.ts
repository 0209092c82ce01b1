/**
 * One ring direction or both (directions.ts): the pure choice, the interface lookup, and the ring-wide agreement
 * in the communicator ('auto' on loopback — one interface for both neighbours — picks one direction; an explicit
 * setting wins; setDirections switches for later collectives on every rank and results stay exact).
 */
import t from 'tap';
import { agreeBidirectional, chooseBidirectional, interfaceOf } from '../../src/ring/directions.js';
import { exactInput, loopbackRing } from './fixtures/helpers.js';

t.test('chooseBidirectional: both only for separate links, with 3+ ranks, unless told', async (t) => {
  t.equal(
    chooseBidirectional('auto', 4, 'lan0', 'lan0'),
    false,
    'switched LAN: both neighbours through one uplink → one direction',
  );
  t.equal(chooseBidirectional('auto', 4, 'tb0', 'tb1'), true, 'point-to-point ring: one cable per neighbour → both');
  t.equal(chooseBidirectional('auto', 2, 'tb0', 'tb1'), false, '2 ranks: one direction already uses both ways');
  t.equal(chooseBidirectional('auto', 3, undefined, 'tb1'), false, 'an unknown interface votes for one direction');
  t.equal(chooseBidirectional(true, 4, 'lan0', 'lan0'), true, 'explicit true wins');
  t.equal(chooseBidirectional(false, 4, 'tb0', 'tb1'), false, 'explicit false wins');
  t.equal(chooseBidirectional(true, 2, 'a', 'b'), false);
  t.equal(agreeBidirectional([true, true, true]), true);
  t.equal(
    agreeBidirectional([true, false, true]),
    false,
    'one rank on a shared link makes the whole ring one-direction',
  );
  t.equal(agreeBidirectional([]), false);
});

t.test('interfaceOf maps a local address to its interface', async (t) => {
  const table = {
    lo: [
      {
        address: '127.0.0.1',
        netmask: '255.0.0.0',
        family: 'IPv4',
        mac: '00:00:00:00:00:00',
        internal: true,
        cidr: '127.0.0.1/8',
      },
    ],
    p2p1: [
      {
        address: '10.77.1.1',
        netmask: '255.255.255.252',
        family: 'IPv4',
        mac: '02:00:00:00:00:01',
        internal: false,
        cidr: '10.77.1.1/30',
      },
    ],
  } as const;
  t.equal(interfaceOf('10.77.1.1', table as never), 'p2p1');
  t.equal(interfaceOf('::ffff:10.77.1.1', table as never), 'p2p1', 'IPv4-mapped form');
  t.equal(interfaceOf('10.9.9.9', table as never), '10.9.9.9', 'unknown address: itself');
  t.equal(interfaceOf(undefined, table as never), undefined);
});

t.test("loopback ring: 'auto' agrees on one direction, explicit true keeps both, setDirections switches", async (t) => {
  const auto = await loopbackRing(4, { bidirectional: 'auto' });
  t.teardown(() => Promise.all(auto.map((c) => c.close())));
  t.same(
    auto.map((c) => c.options.bidirectional),
    [false, false, false, false],
    'every rank: one direction (one interface, lo)',
  );
  t.same(
    auto.map((c) => c.options.directions),
    ['auto', 'auto', 'auto', 'auto'],
  );

  const count = 300_000; // 1.2 MB float32: large enough for two lanes when both directions are on
  const check = async (label: string): Promise<void> => {
    const bufs = auto.map((_, r) => exactInput('float32', count, r));
    await Promise.all(auto.map((c, r) => c.allReduce(bufs[r]!)));
    const inputs = auto.map((_, r) => exactInput('float32', count, r));
    const want = inputs[0]!.map((_, i) => inputs.reduce((s, a) => s + a[i]!, 0));
    t.ok(
      bufs.every((b) => b.every((x, i) => x === want[i])),
      `${label}: exact sums on every rank`,
    );
  };
  await check('one direction');
  t.same(await Promise.all(auto.map((c) => c.setDirections(true))), [true, true, true, true]);
  t.equal(auto[2]!.options.bidirectional, true);
  await check('both directions');
  t.same(
    await Promise.all(auto.map((c) => c.setDirections('auto'))),
    [false, false, false, false],
    "'auto' restores the agreed choice",
  );
  await t.rejects(auto[0]!.setDirections('sideways' as never), { code: 'TORUS_API_VALIDATION' });

  const both = await loopbackRing(3, { bidirectional: true });
  t.teardown(() => Promise.all(both.map((c) => c.close())));
  t.same(
    both.map((c) => c.options.bidirectional),
    [true, true, true],
  );
});
