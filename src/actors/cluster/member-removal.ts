/**
 * Operator removal of a member (recovery from a poisoned membership, e.g. members that will
 * never come back and leave the live nodes without a quorum). `node dist/main.js members remove ID`.
 *
 * With a leader, the removal is a command: the leader checks it and writes the member's NodeGone at once. Without
 * one (no quorum: the very case removal is for), this node stops counting the member toward its quorum (an
 * override in memory); it can then be elected with the live nodes' votes and, as leader, writes the NodeGone,
 * after which the override is moot. The operator asserts the member is dead: removing a member that still runs
 * behind a partition can let both sides reach a quorum (docs/cluster.md, Removing a member).
 */
import { TorusError } from '../../protocols/errors.js';
import type { EventBody } from '../../protocols/peer-frames.js';
import type { QuorumVerdict } from './agreement/quorum.js';
import type { AgreementState } from './agreement/types.js';
import type { Logger } from '../../runtime/log.js';

export const REMOVE_MEMBER = 'RemoveMember';
export { REMOVED_REASON } from './agreement/own-writes.js';

export interface RemovalView {
  readonly selfId: string;
  readonly members: readonly string[];
  readonly joined: ReadonlySet<string>;
}

/** Why `nodeId` cannot be removed as seen by `v`, or null. The same check runs on the asking node and the leader. */
export function removalRefusal(v: RemovalView, nodeId: string): TorusError | null {
  if (nodeId === v.selfId)
    return new TorusError('TORUS_MEMBER_SELF', `node ${nodeId} cannot remove itself; ask another member`, { nodeId });
  if (!v.members.includes(nodeId))
    return new TorusError('TORUS_NODE_UNKNOWN', `node ${nodeId} is not a member of this cluster`, {
      nodeId,
      members: v.members,
    });
  if (v.joined.has(nodeId))
    return new TorusError(
      'TORUS_MEMBER_CONNECTED',
      `node ${nodeId} is connected: stop it first (it would join again)`,
      { nodeId },
    );
  return null;
}

export function removeMemberCommand(nodeId: string): EventBody {
  return { type: REMOVE_MEMBER, nodeId };
}

export function isRemoveMember(body: EventBody): body is EventBody & { nodeId: string } {
  return body.type === REMOVE_MEMBER && typeof body.nodeId === 'string' && Object.keys(body).length === 2;
}

/** The answer when there is no leader: this node no longer counts the member; its NodeGone waits for a leader. */
export function pendingRemoval(nodeId: string, q: QuorumVerdict): RemovalOutcome {
  return {
    nodeId,
    status: 'pending',
    message: q.ok
      ? `no leader: ${nodeId} no longer counts toward this node's quorum (${q.why}); its NodeGone is written once a leader is elected`
      : `no leader: ${nodeId} no longer counts toward this node's quorum, which still fails (${q.why}): remove more dead members`,
  };
}

export interface RemovalOutcome {
  readonly nodeId: string;
  /** `removed`: the NodeGone is sequenced; `pending`: no leader, this node no longer counts it and will write it once elected. */
  readonly status: 'removed' | 'pending';
  readonly message: string;
}

export interface RemovalShell {
  readonly view: RemovalView;
  readonly core: AgreementState;
  /** runs a command on the leader */
  readonly command: (body: EventBody) => Promise<unknown>;
  /** tells the core to stop counting the member (no leader) */
  readonly remove: (nodeId: string) => void;
  readonly log: Logger;
}

/** Operator removal of a dead member: refused for this node, an unknown or a connected one. */
export async function removeMember(s: RemovalShell, nodeId: string): Promise<RemovalOutcome> {
  const refusal = removalRefusal(s.view, nodeId);
  if (refusal) throw refusal;
  if (s.core.leader !== null || s.core.quorum.ok) {
    await s.command(removeMemberCommand(nodeId));
    return { nodeId, status: 'removed', message: `NodeGone(${nodeId}) written by the leader` };
  }
  s.remove(nodeId);
  s.log.warn('member removed by the operator while there is no leader: no longer counted toward the quorum', {
    nodeId,
  });
  return pendingRemoval(nodeId, s.core.quorum);
}
