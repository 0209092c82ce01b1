/**
 * One ring direction or both (pure choice; the communicator feeds it the interfaces its sockets use).
 *
 * Both directions pay off only when each neighbour is reached over its own link (a thunderbolt-style ring of
 * point-to-point cables: each cable is full duplex and both directions of both cables carry half the data). When
 * both neighbours are reached through the same local interface (a switched LAN: one uplink per node), the second
 * direction adds nothing the first does not already use — the uplink already carries the +1 ring's sends and
 * receives at once — and costs sockets, per-chunk work and queueing of each lane's ACKs behind the other's data
 * (the LAN ring measured below torch Gloo with both directions on). So `'auto'` (the default) picks
 * both exactly when every rank has its two neighbours on different interfaces; all ranks must agree, because
 * the lane layout must match on every rank (the communicator takes the minimum over ranks at set-up).
 */
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

export type DirectionsOption = boolean | 'auto';

/**
 * This rank's vote: `requested` wins when it is a boolean; `'auto'` votes for both directions when the left and
 * the right neighbour are reached through different local interfaces. With 2 ranks or fewer the answer is one
 * direction whatever was asked (a one-direction ring of two already uses both ways of the single link).
 */
export function chooseBidirectional(
  requested: DirectionsOption,
  n: number,
  leftInterface: string | undefined,
  rightInterface: string | undefined,
): boolean {
  if (n <= 2) return false;
  if (requested !== 'auto') return requested;
  // An interface we cannot name (a socket closed meanwhile) votes for one direction: never worse on a shared link.
  if (leftInterface === undefined || rightInterface === undefined) return false;
  return leftInterface !== rightInterface;
}

/** The ring's decision from every rank's vote: both directions only if every rank voted for them. */
export function agreeBidirectional(votes: readonly boolean[]): boolean {
  return votes.length > 0 && votes.every(Boolean);
}

/**
 * The local interface that owns `address` (a socket's local address), from `os.networkInterfaces()` or a given
 * table; the address itself when no interface lists it (so two distinct unknown addresses still differ).
 */
export function interfaceOf(
  address: string | undefined,
  table: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string | undefined {
  if (!address) return undefined;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  for (const [name, infos] of Object.entries(table)) {
    if (infos?.some((i) => i.address === plain || i.address === address)) return name;
  }
  return plain;
}
