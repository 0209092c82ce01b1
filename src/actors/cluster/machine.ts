/**
 * The statechart of the thread that owns the replicated state: the node's role in the agreement (discovering →
 * follower ⇄ candidate → leader), as reported by the ClusterNode shell, and where the applied state stands. Pure:
 * the shell sends `cluster.role` / `cluster.progress` / `cluster.members` / `cluster.quorum` events; the snapshot
 * shows the role (value), term, leader, the applied index, term, digest and counts.
 */
import { assign, setup } from 'xstate';
import type { Role } from '../../protocols/peer-frames.js';
import type { ClusterActorMessage } from './messages.js';
import type { ReplicaView } from '../topology-keeper/queries.js';

export interface ClusterContext {
  readonly nodeId: string;
  readonly term: number;
  readonly leader: string | null;
  readonly lastIndex: number;
  readonly lastTerm: number;
  readonly digest: string;
  /** What the applied state holds (the dashboard and `status` show it). */
  readonly counts: ReplicaView['counts'];
  readonly members: readonly string[];
  readonly heard: number;
  /** Whether this node reaches a quorum of the members its state lists (without it: no leader, no writes). */
  readonly quorum: {
    readonly ok: boolean;
    readonly reached: number;
    readonly members: number;
    readonly needed: number;
  };
}

/** `cluster.role` from outside the shell has its type from the schemas (messages.ts). */
export type ClusterActorEvent =
  | ClusterActorMessage
  | ({ readonly type: 'cluster.progress' } & ReplicaView)
  | { readonly type: 'cluster.members'; readonly members: readonly string[]; readonly heard: number }
  | {
      readonly type: 'cluster.quorum';
      readonly ok: boolean;
      readonly reached: number;
      readonly members: number;
      readonly needed: number;
    };

const role = (r: Role) => ({
  guard: ({ event }: { event: ClusterActorEvent }) => event.type === 'cluster.role' && event.role === r,
  target: `#cluster.${r}`,
});

export const clusterMachine = setup({
  types: {} as {
    context: ClusterContext;
    events: ClusterActorEvent;
    input: { nodeId: string };
  },
  actions: {
    term: assign(({ context, event }) =>
      event.type === 'cluster.role' ? { ...context, term: event.term, leader: event.leader } : context,
    ),
    progress: assign(({ context, event }) =>
      event.type === 'cluster.progress'
        ? {
            ...context,
            lastIndex: event.lastIndex,
            lastTerm: event.lastTerm,
            digest: event.digest,
            counts: event.counts,
          }
        : context,
    ),
    members: assign(({ context, event }) =>
      event.type === 'cluster.members' ? { ...context, members: event.members, heard: event.heard } : context,
    ),
    quorum: assign(({ context, event }) =>
      event.type === 'cluster.quorum'
        ? { ...context, quorum: { ok: event.ok, reached: event.reached, members: event.members, needed: event.needed } }
        : context,
    ),
  },
}).createMachine({
  id: 'cluster',
  initial: 'discovering',
  context: ({ input }) => ({
    nodeId: input.nodeId,
    term: 0,
    leader: null,
    lastIndex: 0,
    lastTerm: 0,
    digest: '',
    counts: { nodes: 0, links: 0, instances: 0, tasks: 0 },
    members: [],
    heard: 0,
    quorum: { ok: true, reached: 0, members: 0, needed: 0 },
  }),
  on: {
    'cluster.role': [
      { ...role('discovering'), actions: 'term' },
      { ...role('follower'), actions: 'term' },
      { ...role('candidate'), actions: 'term' },
      { ...role('leader'), actions: 'term' },
    ],
    'cluster.progress': { actions: 'progress' },
    'cluster.members': { actions: 'members' },
    'cluster.quorum': { actions: 'quorum' },
  },
  states: {
    /** Listening for an existing leader before campaigning. */
    discovering: {},
    /** Applying the leader's log (leader may be null while an election runs). */
    follower: {},
    /** Asking every live peer for its vote. */
    candidate: {},
    /** Sequencing events, serving catch-up, writing membership events. */
    leader: {},
  },
});
