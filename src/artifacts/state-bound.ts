/**
 * The distribution bound (distribution-bound.ts) from the replicated state: its measured links, the ports of
 * each node (its profile's interfaces), the artifact's complete holders as the nodes that hold every chunk.
 * Holdings by count alone (a partial holder without ranges) are not counted as holding any chunk: the bound then
 * assumes those bytes must still reach it, which only a receiver's own `needs` can say better.
 */
import type { ClusterState } from '../actors/topology-keeper/state.js';
import { distributionBound, type ChunkSet, type DistributionBound } from './distribution-bound.js';

/** Chunk sizes when only the totals are known: `chunks` chunks of the mean size (the remainder on the last). */
export function evenChunks(bytes: number, chunks: number): number[] {
  if (chunks <= 0) return [];
  const mean = Math.floor(bytes / chunks);
  return Array.from({ length: chunks }, (_, i) => (i === chunks - 1 ? bytes - mean * (chunks - 1) : mean));
}

export function boundFromState(
  state: ClusterState,
  artifactId: string,
  needs: Readonly<Record<string, ChunkSet>>,
  chunkBytes?: readonly number[],
  extraHolds: Readonly<Record<string, ChunkSet>> = {},
): DistributionBound | undefined {
  const record =
    state.artifacts && Object.hasOwn(state.artifacts, artifactId) ? state.artifacts[artifactId] : undefined;
  if (!record) return undefined;
  const holds: Record<string, ChunkSet> = { ...extraHolds };
  for (const [node, h] of Object.entries(record.holders)) if (h.have === record.chunks) holds[node] = 'all';
  const ports: Record<string, string[][]> = {};
  for (const [id, n] of Object.entries(state.nodes))
    if (n.profile) ports[id] = n.profile.interfaces.map((i) => [...i.ips]);
  return distributionBound({
    links: state.links,
    ports,
    chunkBytes: chunkBytes ?? evenChunks(record.bytes, record.chunks),
    holds,
    needs,
  });
}

/** The bound as transfers and instance views show it: seconds and the term that sets them. */
export interface BoundView {
  readonly seconds: number;
  /** the node whose ports set it ('holders': the holders together) and which side of them */
  readonly node: string;
  readonly side: 'in' | 'out';
  readonly bytes: number;
  readonly capacityBps: number;
}

export function boundView(b: DistributionBound | undefined): BoundView | undefined {
  if (!b?.limit) return undefined;
  const { node, side, bytes, capacityBps } = b.limit;
  return { seconds: Math.round(b.seconds * 1000) / 1000, node, side, bytes, capacityBps };
}
