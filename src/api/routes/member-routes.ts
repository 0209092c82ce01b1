import type { Route } from '../router.js';

/**
 * Operator removal of a dead member (recovery from a poisoned membership; src/actors/cluster/member-removal.ts).
 * 200 `{nodeId, status: 'removed'}` when the leader wrote the NodeGone; 202 `{status: 'pending'}` when there is
 * no leader yet and this node stopped counting the member toward its quorum. Refused: this node itself (409 TORUS_MEMBER_SELF),
 * an unknown id (404 TORUS_NODE_UNKNOWN), a connected member (409 TORUS_MEMBER_CONNECTED).
 */
export const memberRoutes: readonly Route[] = [
  {
    method: 'DELETE',
    path: '/v1/members/:id',
    summary:
      'remove a dead member from the membership so a quorum can be had again (refuses itself, unknown and connected ids)',
    handler: async ({ facade, params }) => {
      const answer = await facade.removeMember(params.id ?? '');
      return { status: answer.status === 'removed' ? 200 : 202, body: answer };
    },
  },
];
