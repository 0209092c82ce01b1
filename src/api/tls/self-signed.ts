/**
 * A self-signed X.509 certificate made with node:crypto alone (no openssl binary, no dependency): an ECDSA P-256
 * key and a v3 certificate, DER written by hand. Only what a TLS server needs: subject/issuer CN, validity,
 * subjectAltName (the node's names and addresses) and basicConstraints CA:false. Clients do not verify it
 * against a CA; they pin its SHA-256 fingerprint (known_hosts style), so the fields are informational.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

const tag = (t: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  const n = body.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([t]), len, body]);
};
const seq = (...parts: Buffer[]): Buffer => tag(0x30, ...parts);
const set = (...parts: Buffer[]): Buffer => tag(0x31, ...parts);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const out = [a * 40 + b];
  for (const v of rest) {
    const bytes = [v & 0x7f];
    for (let x = v >>> 7; x > 0; x >>>= 7) bytes.unshift((x & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return tag(0x06, Buffer.from(out));
}

/**
 * A DER INTEGER of the unsigned big-endian `bytes`, in its one minimal form: leading zero bytes dropped, one put back
 * where the top bit is set (else it would read negative). OpenSSL refuses any other form ("illegal padding").
 */
export function derInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const body = bytes.subarray(start);
  return tag(0x02, body[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);
}
const integer = derInteger;

/** GeneralizedTime (valid for every year, unlike UTCTime). */
const time = (d: Date): Buffer =>
  tag(
    0x18,
    Buffer.from(
      d
        .toISOString()
        .replace(/[-:T]/g, '')
        .replace(/\.\d+Z$/, 'Z'),
      'ascii',
    ),
  );
const name = (cn: string): Buffer => seq(set(seq(oid('2.5.4.3'), tag(0x0c, Buffer.from(cn, 'utf8')))));

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::') as [string, string?];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.concat(
    groups.map((g) => {
      const b = Buffer.alloc(2);
      b.writeUInt16BE(parseInt(g, 16));
      return b;
    }),
  );
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

export interface SelfSignedCert {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

/** A new key and certificate for `commonName`, valid from an hour ago for `days`, naming `altNames` (DNS names or IPs). */
export function makeSelfSignedCert(
  commonName: string,
  altNames: readonly string[],
  days = 3650,
  now = new Date(),
): SelfSignedCert {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const san = altNames.map((n) => (isIP(n) ? tag(0x87, ipBytes(n)) : tag(0x82, Buffer.from(n, 'ascii'))));
  const extensions = tag(
    0xa3,
    seq(
      seq(oid('2.5.29.19'), tag(0x01, Buffer.from([0xff])), tag(0x04, seq())),
      seq(oid('2.5.29.17'), tag(0x04, seq(...san))),
    ),
  );
  // 16 random octets, positive and with a non-zero first octet (RFC 5280: at most 20, positive).
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const tbs = seq(
    tag(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(commonName),
    seq(time(new Date(now.getTime() - 3_600_000)), time(new Date(now.getTime() + days * 86_400_000))),
    name(commonName),
    spki,
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = seq(tbs, ECDSA_SHA256, tag(0x03, Buffer.from([0]), signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** The certificate's SHA-256 fingerprint as `AA:BB:…` (what browsers and `openssl x509 -fingerprint` show). */
export function certFingerprint(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/** True when `key` is the private key of `certPem` (a mismatched --tls-cert/--tls-key pair fails at start, clearly). */
export function keyMatchesCert(certPem: string, keyPem: string): boolean {
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return false;
  }
  return new X509Certificate(certPem).checkPrivateKey(key);
}
