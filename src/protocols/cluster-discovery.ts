/**
 * The mDNS advertisement of a torus node: service `_torus._tcp.local`, instance `<nodeId>._torus._tcp.local`,
 * TXT `id=`, `c=` (cluster-name hash), `port=` (cluster port), `v=` (protocol version), `inc=` (incarnation).
 * `decodeTxt` is strict and returns null for records that are not ours or malformed (mDNS is a shared medium).
 * TXT is a text format (`key=value` strings): a small parser reads it, and the record it yields is checked
 * against its schema, `Advert`.
 */
import { compile, Type, type Shape } from './schema-kit.js';

export const SERVICE = '_torus._tcp.local';

export const Advert = Type.Object(
  {
    nodeId: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$' }),
    /** a hash of the cluster name, hex */
    cluster: Type.String({ pattern: '^[0-9a-f]{1,64}$' }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    v: Type.Integer({ minimum: 0, maximum: 65535 }),
    incarnation: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  },
  { additionalProperties: false },
);
export type Advert = Shape<typeof Advert>;
const advertCodec = compile(Advert, 'frame', 'txt');

export function encodeTxt(a: Advert): Buffer[] {
  return [`id=${a.nodeId}`, `c=${a.cluster}`, `port=${a.port}`, `v=${a.v}`, `inc=${a.incarnation}`].map((s) =>
    Buffer.from(s),
  );
}

/** The record a TXT set advertises, or null when it is not ours or malformed (never an error: anyone may send one). */
export function decodeTxt(data: unknown): Advert | null {
  if (!Array.isArray(data) || data.length > 16) return null;
  const kv = new Map<string, string>();
  for (const item of data) {
    const s = Buffer.isBuffer(item) ? item.toString('utf8') : typeof item === 'string' ? item : null;
    if (s === null || s.length > 200) return null;
    const eq = s.indexOf('=');
    if (eq > 0) kv.set(s.slice(0, eq), s.slice(eq + 1));
  }
  // Numbers in decimal digits only (`Number` would also take `0x10`, `1e3`, ` 7`).
  const int = (k: string): number | null => {
    const raw = kv.get(k);
    return raw !== undefined && /^\d{1,16}$/.test(raw) ? Number(raw) : null;
  };
  const advert = {
    nodeId: kv.get('id'),
    cluster: kv.get('c'),
    port: int('port'),
    v: int('v'),
    incarnation: int('inc'),
  };
  return advertCodec.is(advert) ? advert : null;
}
