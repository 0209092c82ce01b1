/**
 * The hand-written DER of the node's self-signed certificate: integers in their one minimal form (OpenSSL refuses
 * any other: a random serial starting with a zero byte made one certificate in 256 unreadable), and many fresh
 * certificates all parse.
 */
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { derInteger, makeSelfSignedCert } from '../../../src/api/tls/self-signed.js';

const hex = (b: Buffer): string => b.toString('hex');

t.test('DER integers are minimal: leading zeros dropped, a zero put back before a set top bit', async (t) => {
  t.equal(hex(derInteger(Buffer.from([0x00, 0x01, 0x02]))), '02020102');
  t.equal(hex(derInteger(Buffer.from([0x00, 0x00, 0x81]))), '02020081');
  t.equal(hex(derInteger(Buffer.from([0x81]))), '02020081');
  t.equal(hex(derInteger(Buffer.from([0x7f, 0xff]))), '02027fff');
  t.equal(hex(derInteger(Buffer.from([0x00]))), '020100', 'zero stays one byte');
  t.equal(hex(derInteger(Buffer.from([0x00, 0x00]))), '020100');
});

t.test('300 fresh certificates all parse, each with a 16-octet positive serial', async (t) => {
  const bad: string[] = [];
  for (let i = 0; i < 300; i++) {
    const { cert } = makeSelfSignedCert('torus node test', ['localhost', '127.0.0.1']);
    try {
      const x = new X509Certificate(cert);
      if (x.serialNumber.length !== 32 || Number.parseInt(x.serialNumber[0]!, 16) >= 8) bad.push(x.serialNumber);
    } catch (error) {
      bad.push((error as Error).message);
    }
  }
  t.same(bad, [], 'none refused');
});
