/**
 * The peer (data-plane) routes every node serves on its HTTP port for artifact transfers. They are not part of
 * the user API: they take the HMAC proof of the cluster key (proof.ts), not the API token.
 *
 *   GET  /v1/peer/artifacts/<id>/manifest            the manifest bytes (its sha256 is <id>)
 *   GET  /v1/peer/artifacts/<id>/have                { chunks, count, bits } (bits: base64 bitset, chunk i = bit i%8 of byte i/8)
 *   GET  /v1/peer/artifacts/<id>/chunks/<i>?waitMs=N chunk i's bytes; with waitMs, a node still receiving the
 *                                                    artifact answers as soon as it verified chunk i (≤ 30 s)
 *   GET  /v1/peer/artifacts/<id>/chunks?from=F&to=T  chunks F..T-1 in order, one body (their bytes back to back);
 *                                                    only chunks held now, at most MAX_RUN_CHUNKS and MAX_RUN_BYTES
 *   POST /v1/peer/artifacts/<id>/fetch               { upstream?, name? }: fetch it now (a broadcast chain's order)
 */
export const PEER_PREFIX = '/v1/peer/artifacts/';
export const MAX_CHUNK_WAIT_MS = 30_000;
/** A run is bounded so one request cannot pin a holder's disk and link for long (a few MiB is what receivers ask). */
export const MAX_RUN_CHUNKS = 256;
export const MAX_RUN_BYTES = 64 * 1024 * 1024;

export const peerPath = {
  manifest: (id: string) => `${PEER_PREFIX}${id}/manifest`,
  have: (id: string) => `${PEER_PREFIX}${id}/have`,
  chunk: (id: string, index: number, waitMs = 0) =>
    `${PEER_PREFIX}${id}/chunks/${index}${waitMs > 0 ? `?waitMs=${waitMs}` : ''}`,
  run: (id: string, from: number, to: number) => `${PEER_PREFIX}${id}/chunks?from=${from}&to=${to}`,
  fetch: (id: string) => `${PEER_PREFIX}${id}/fetch`,
};

/** A held-chunk set as the `have` route sends it. */
export function encodeBits(have: Uint8Array): string {
  const bits = Buffer.alloc(Math.ceil(have.length / 8));
  have.forEach((h, i) => {
    if (h) bits[i >> 3]! |= 1 << (i & 7);
  });
  return bits.toString('base64');
}

export function decodeBits(b64: string, chunks: number): Uint8Array {
  const bits = Buffer.from(b64, 'base64');
  const out = new Uint8Array(chunks);
  for (let i = 0; i < chunks; i++) out[i] = ((bits[i >> 3] ?? 0) >> (i & 7)) & 1;
  return out;
}
