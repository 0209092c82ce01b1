/**
 * The mDNS advertisement of a torus node: service `_torus._tcp.local`, instance `<nodeId>._torus._tcp.local`,
 * TXT `id=`, `c=` (cluster-name hash), `port=` (cluster port), `v=` (protocol version), `inc=` (incarnation).
 * `decodeTxt` is strict and returns null for records that are not ours or malformed (mDNS is a shared medium).
 */
export const SERVICE = '_torus._tcp.local';

export interface Advert {
  readonly nodeId: string;
  readonly cluster: string;
  readonly port: number;
  readonly v: number;
  readonly incarnation: number;
}

export function encodeTxt(a: Advert): Buffer[] {
  return [`id=${a.nodeId}`, `c=${a.cluster}`, `port=${a.port}`, `v=${a.v}`, `inc=${a.incarnation}`].map((s) => Buffer.from(s));
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$/;

export function decodeTxt(data: unknown): Advert | null {
  if (!Array.isArray(data) || data.length > 16) return null;
  const kv = new Map<string, string>();
  for (const item of data) {
    const s = Buffer.isBuffer(item) ? item.toString('utf8') : typeof item === 'string' ? item : null;
    if (s === null || s.length > 200) return null;
    const eq = s.indexOf('=');
    if (eq > 0) kv.set(s.slice(0, eq), s.slice(eq + 1));
  }
  const nodeId = kv.get('id');
  const cluster = kv.get('c');
  const int = (k: string, max: number): number | null => {
    const raw = kv.get(k);
    if (raw === undefined || !/^\d{1,15}$/.test(raw)) return null;
    const n = Number(raw);
    return n <= max ? n : null;
  };
  const port = int('port', 65535);
  const v = int('v', 65535);
  const incarnation = int('inc', Number.MAX_SAFE_INTEGER);
  if (!nodeId || !ID_RE.test(nodeId) || !cluster || !/^[0-9a-f]{1,64}$/.test(cluster) || !port || v === null || incarnation === null) return null;
  return { nodeId, cluster, port, v, incarnation };
}
