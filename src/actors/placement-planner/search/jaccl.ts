import { chooseCoordinatorAddress, type AddressChoice } from './address-choice.js';
import type { ClusterIndex } from './cluster-index.js';

/**
 * jaccl devices matrix in rank order: entry [i][j] is the RDMA interface of rank i that reaches rank j (the
 * first RDMA link i → j in input order), null on the diagonal. Returns the first ordered pair without an RDMA
 * link instead when the set is not all-to-all RDMA connected.
 */
export function jacclDevicesMatrix(
  index: ClusterIndex,
  members: readonly number[],
): { ok: true; matrix: (string | null)[][] } | { ok: false; from: string; to: string } {
  const matrix: (string | null)[][] = [];
  for (const i of members) {
    const row: (string | null)[] = [];
    for (const j of members) {
      if (i === j) {
        row.push(null);
        continue;
      }
      const link = index.rdma.get(i * index.n + j)?.[0];
      if (!link) return { ok: false, from: index.ids[i] as string, to: index.ids[j] as string };
      row.push(link.sourceIface);
    }
    matrix.push(row);
  }
  return { ok: true, matrix };
}

/** How every non-coordinator node reaches the coordinator, or the first node that cannot. */
export function coordinatorRoutes(
  index: ClusterIndex,
  members: readonly number[],
  coordinator: number,
): { ok: true; routes: Map<number, AddressChoice> } | { ok: false; node: string } {
  const routes = new Map<number, AddressChoice>();
  for (const m of members) {
    if (m === coordinator) continue;
    const choice = chooseCoordinatorAddress(
      index.socket.get(m * index.n + coordinator) ?? [],
      index.nodes[coordinator],
    );
    if (!choice) return { ok: false, node: index.ids[m] as string };
    routes.set(m, choice);
  }
  return { ok: true, routes };
}

/** jaccl coordinators: rank 0 listens on 0.0.0.0:port, every other node dials it at its chosen address. */
export function jacclCoordinators(
  index: ClusterIndex,
  members: readonly number[],
  coordinator: number,
  routes: ReadonlyMap<number, AddressChoice>,
  port: number,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of members) {
    out[index.ids[m] as string] = m === coordinator ? `0.0.0.0:${port}` : `${routes.get(m)?.ip ?? ''}:${port}`;
  }
  return out;
}
