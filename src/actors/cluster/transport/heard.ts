/** The "heard but not joined" list entries of the connection manager, and which close reasons are listed. */
import type { CloseInfo } from './peer-connection.js';

/** `auth-required`: one side has the cluster key and the other none; `auth-failure`: both have one, not the same. */
export type HeardReason = 'other-cluster' | 'incompatible-version' | 'auth-required' | 'auth-failure' | 'unreachable';

export interface HeardPeer {
  readonly address: string;
  readonly nodeId?: string;
  readonly reason: HeardReason;
  readonly detail: string;
  readonly via: TargetSource | 'inbound';
  readonly at: number;
  /** For a peer we dial that refused us: refusals in a row, and when we dial it next (ms since epoch). */
  readonly attempts?: number;
  readonly nextRetryAt?: number;
}

export type TargetSource = 'static' | 'mdns' | 'gossip';

export function listedReason(r: CloseInfo['refused']): HeardReason | undefined {
  switch (r) {
    case 'other-cluster':
      return 'other-cluster';
    case 'incompatible-version':
      return 'incompatible-version';
    case 'auth-failure':
      return 'auth-failure';
    case 'auth-required':
      return 'auth-required';
    default:
      return undefined;
  }
}
