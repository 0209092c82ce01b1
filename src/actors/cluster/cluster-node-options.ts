/** Options and small helpers of ClusterNode (cluster-node.ts). */
import { networkInterfaces } from 'node:os';
import { TorusError } from '../../protocols/errors.js';
import type { Logger } from '../../runtime/log.js';
import type { EventBody, Role } from '../../protocols/peer-frames.js';
import type { Timings } from './agreement/types.js';
import type { CommandResult } from './transport/forwarder.js';
import type { QuorumVerdict } from './agreement/quorum.js';
import type { DurableFs } from '../../native/durable-fs.js';
import type { RedialPolicy } from './transport/redial.js';
import type { NodeDescriptor, StateMachine } from './agreement/state-machine.js';
import type { AgreementConfig } from './agreement/types.js';

export interface ClusterNodeOptions<S> {
  readonly nodeId: string;
  readonly incarnation: number;
  readonly clusterName: string;
  readonly replica: StateMachine<S>;
  readonly startedAt?: number;
  readonly secret?: string | null;
  /** Static peers `host:port` (networks without multicast). */
  readonly peers?: readonly string[];
  /** Added to each static peer's port (the CLI takes peers' API ports; the cluster listens one above). */
  readonly peerPortOffset?: number;
  readonly host?: string;
  readonly port?: number;
  readonly apiPort?: number;
  readonly name?: string;
  readonly version?: string;
  readonly addresses?: readonly string[];
  readonly mdns?: boolean;
  readonly timings?: Partial<Timings>;
  /** Re-dial backoff for peers that refused us (default 10 s doubling to 5 min). */
  readonly redial?: RedialPolicy;
  /** Data dir: save the replicated state there and restore it at start (state-store.ts); none = memory only. */
  readonly persistDir?: string;
  /** Entries appended to the saved log between two saved snapshots (default 1000). */
  readonly persistCompactEvery?: number;
  /** A damaged saved state: keep the readable part, move the rest aside, catch up (`--repair-state`); else refuse. */
  readonly repairState?: boolean;
  /** The fs layer of the saved state (tests count fsyncs). */
  readonly fs?: DurableFs;
  /** Inbound connections in their handshake at once (handshake-budget.ts). */
  readonly maxPendingHandshakes?: number;
  readonly tickMs?: number;
  readonly commandTimeoutMs?: number;
  /** Leader only: turns a command into events (or throws a TorusError that the caller receives). */
  readonly onCommand?: (command: EventBody, state: S) => Promise<CommandResult> | CommandResult;
  readonly now?: () => number;
  readonly log?: Logger;
}

export interface RoleInfo {
  readonly role: Role;
  readonly term: number;
  readonly leader: string | null;
  readonly quorum: QuorumVerdict;
}

export function localIPv4s(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4' && !i.internal)
    .map((i) => i!.address);
}

export function parsePeers(list: readonly string[]): { host: string; port: number }[] {
  return list.map((p) => {
    const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(p.trim());
    const port = m ? Number(m[2]) : NaN;
    if (!m || !(port > 0 && port < 65536))
      throw new TorusError('TORUS_CONFIG_INVALID', `peer ${JSON.stringify(p)} is not host:port`, { peer: p });
    return { host: m[1]!, port };
  });
}

/** What this node's NodeJoined says of it, once it listens on `peerPort`. */
export function selfDescriptor<S>(o: ClusterNodeOptions<S>, peerPort: number): NodeDescriptor {
  return {
    nodeId: o.nodeId,
    name: o.name ?? o.nodeId,
    incarnation: o.incarnation,
    apiPort: o.apiPort ?? 0,
    peerPort,
    version: o.version ?? '0.0.0',
    addresses: o.addresses ?? localIPv4s(),
  };
}

/** The leader's own writes (agreement/own-writes.ts), made by the replica's event makers. */
export function ownWrites<S>(replica: StateMachine<S>, self: NodeDescriptor): AgreementConfig['writes'] {
  return {
    termEntry: (id) => replica.leaderEvent(id),
    membership: {
      self,
      joined: (node) => replica.joinedEvent(node),
      gone: (id, reason) => replica.goneEvent(id, reason),
    },
    ...(replica.check ? { check: (event: EventBody) => replica.check!(event) } : {}),
  };
}
