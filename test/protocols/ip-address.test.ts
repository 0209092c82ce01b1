import t from 'tap';
import fc from 'fast-check';
import { isIP } from 'node:net';
import { IP_ADDRESS_PATTERN } from '../../src/protocols/event-fields.js';

const pattern = new RegExp(IP_ADDRESS_PATTERN);

t.test('every string the API address pattern allows is an address node:net reads', async (t) => {
  fc.assert(
    fc.property(fc.stringMatching(pattern), (text) => isIP(text) !== 0),
    { seed: 20261203, numRuns: 5000 },
  );
  for (const address of [
    '127.0.0.1',
    '10.77.0.2',
    '::1',
    '::',
    'fe80::1',
    '2001:db8::8a2e:370:7334',
    '::ffff:192.0.2.1',
  ])
    t.ok(pattern.test(address), `${address} allowed`);
  for (const text of ['', '  ', '1.2.3', '256.1.1.1', '1:::2', '01.2.3.4x', 'localhost'])
    t.notOk(pattern.test(text), `${JSON.stringify(text)} refused`);
});
