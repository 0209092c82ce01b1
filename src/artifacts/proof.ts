/**
 * Peer requests for artifact data prove the cluster's data-plane key (`keys.dataKey`) with the one peer-proof
 * format every node-to-node HTTP request uses (protocols/peer-http-proof.ts): bound to the method, path and
 * query, the body's digest, the sending node, the time and a nonce, accepted once within ±30 s. A captured proof
 * repeats nothing; none carries the API token.
 */
import {
  PEER_PROOF_HEADER,
  PeerProofChecker,
  peerSigner,
  type PeerSigner,
  type PeerVerdict,
} from '../protocols/peer-http-proof.js';

export const PROOF_HEADER = PEER_PROOF_HEADER;

/** This node's signer for artifact peer requests (`key` null, an --insecure-open cluster: signs nothing). */
export function artifactSigner(key: string | null, nodeId: string, now?: () => number): PeerSigner {
  return peerSigner(key, nodeId, now);
}

/** The receiving side: one per node (it remembers the proofs it accepted, to refuse a replay). */
export class ArtifactProofs {
  readonly #checker: PeerProofChecker | null;

  constructor(key: string | null, now?: () => number) {
    this.#checker = key === null ? null : new PeerProofChecker(key, now);
  }

  /** Always ok in an open cluster (no key). */
  check(method: string, pathAndQuery: string, header: string | string[] | undefined, body?: Uint8Array): PeerVerdict {
    return this.#checker ? this.#checker.check(header, method, pathAndQuery, body) : { ok: true, nodeId: '' };
  }
}
