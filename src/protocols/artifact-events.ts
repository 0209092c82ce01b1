/**
 * Artifact holdings in the replicated state (issue 15): which node holds which artifact, completely or in part,
 * so every node (and the planner) knows where the bytes are. A node proposes `ArtifactHeld` when it adds an
 * artifact, when a transfer starts, every few seconds while it runs (progress) and when it completes, and at
 * start for everything in its store; `ArtifactDropped` when it removes one (or no longer has it at start).
 */
import { int, str } from '../core/topology/reader.js';
import { compact, nodeId, optInt, reason, W, type Fields, type NodeId } from './event-fields.js';

export interface ArtifactHeld {
  readonly type: 'ArtifactHeld'; readonly nodeId: NodeId; readonly artifactId: string; readonly name: string;
  /** total bytes and chunk count of the artifact (the same for every holder: they come from its manifest) */
  readonly bytes: number; readonly chunks: number;
  /** chunks this node holds, verified; `have === chunks` means complete */
  readonly have: number;
  readonly incarnation?: number;
  /** while a transfer runs: the bytes per second this node is receiving it at (progress for /v1/events and views) */
  readonly rateBps?: number;
}
export interface ArtifactDropped { readonly type: 'ArtifactDropped'; readonly nodeId: NodeId; readonly artifactId: string; readonly reason: string }

export const ARTIFACT_ID_PATTERN = /^[0-9a-f]{64}$/;
const artifactIdField = (v: unknown, p: string): string => str(W, v, p, { pattern: ARTIFACT_ID_PATTERN });

export const ARTIFACT_EVENT_DECODERS = {
  ArtifactHeld: [['nodeId', 'artifactId', 'name', 'bytes', 'chunks', 'have'], ['incarnation', 'rateBps'], (o: Fields, p: string): ArtifactHeld => {
    const chunks = int(W, o.chunks, `${p}.chunks`, 0, 1 << 20);
    return compact({
      type: 'ArtifactHeld', nodeId: nodeId(o.nodeId, `${p}.nodeId`), artifactId: artifactIdField(o.artifactId, `${p}.artifactId`),
      name: str(W, o.name, `${p}.name`, { min: 1, max: 256 }), bytes: int(W, o.bytes, `${p}.bytes`), chunks,
      have: int(W, o.have, `${p}.have`, 0, chunks), incarnation: optInt(o.incarnation, `${p}.incarnation`), rateBps: optInt(o.rateBps, `${p}.rateBps`),
    });
  }],
  ArtifactDropped: [['nodeId', 'artifactId', 'reason'], [], (o: Fields, p: string): ArtifactDropped => ({
    type: 'ArtifactDropped', nodeId: nodeId(o.nodeId, `${p}.nodeId`), artifactId: artifactIdField(o.artifactId, `${p}.artifactId`), reason: reason(o.reason, `${p}.reason`),
  })],
} as const;
