/**
 * Artifact holdings in the replicated state: which node holds which artifact, completely or in part,
 * so every node (and the planner) knows where the bytes are. A node proposes `ArtifactHeld` when it adds an
 * artifact, when a transfer starts, every few seconds while it runs (progress) and when it completes, and at
 * start for everything in its store; `ArtifactDropped` when it removes one (or no longer has it at start).
 */
import { ValidationError } from './errors.js';
import { CLOSED, Count, Id, Reason, W } from './event-fields.js';
import { checkModelRecord, ModelRecord } from './model-record.js';
import { Type, type Shape } from './schema-kit.js';

export const ARTIFACT_ID_PATTERN = /^[0-9a-f]{64}$/;
const ArtifactId = Type.String({ pattern: ARTIFACT_ID_PATTERN.source });

/**
 * A node holding part of a model artifact for a pipeline stage (docs/artifacts.md, "Models"): the layers
 * [fromLayer, toLayer) it holds or is fetching, and of that stage's chunks (stage-chunks.ts) how many it has. A
 * stable holding, not an interrupted transfer: the node serves those chunks and does not fetch the rest.
 */
export const ArtifactStage = Type.Object(
  {
    fromLayer: Count(0, 999_999),
    /** exclusive */
    toLayer: Count(1, 1_000_000),
    have: Count(0, 1 << 20),
    chunks: Count(1, 1 << 20),
  },
  CLOSED,
);
export type ArtifactStage = Shape<typeof ArtifactStage>;

export const ArtifactHeld = Type.Object(
  {
    type: Type.Literal('ArtifactHeld'),
    nodeId: Id,
    artifactId: ArtifactId,
    name: Type.String({ minLength: 1, maxLength: 256 }),
    /** total bytes and chunk count of the artifact (the same for every holder: they come from its manifest) */
    bytes: Count(),
    chunks: Count(0, 1 << 20),
    /** chunks this node holds, verified; `have === chunks` means complete */
    have: Count(0, 1 << 20),
    incarnation: Type.Optional(Count()),
    /** while a transfer runs: the bytes per second this node is receiving it at (progress for /v1/events and views) */
    rateBps: Type.Optional(Count()),
    /** a model artifact's record (docs/artifacts.md, "Models"): sent while the state has none for it */
    model: Type.Optional(ModelRecord),
    /** a model artifact held for a pipeline stage: its layers and how far that stage's chunks have come */
    stage: Type.Optional(ArtifactStage),
  },
  CLOSED,
);
export type ArtifactHeld = Shape<typeof ArtifactHeld>;

export const ArtifactDropped = Type.Object(
  { type: Type.Literal('ArtifactDropped'), nodeId: Id, artifactId: ArtifactId, reason: Reason },
  CLOSED,
);
export type ArtifactDropped = Shape<typeof ArtifactDropped>;

/** A stage's rules the schema cannot say: a non-empty layer range, its chunks among the artifact's and the holder's. */
export function checkArtifactStage(s: ArtifactStage, chunks: number, have: number, p: string): void {
  if (s.fromLayer >= s.toLayer) throw new ValidationError(W, `${p}.toLayer`, `must be above fromLayer ${s.fromLayer}`);
  if (s.chunks > chunks) throw new ValidationError(W, `${p}.chunks`, `out of range [1, ${chunks}]`);
  if (s.have > s.chunks || s.have > have)
    throw new ValidationError(W, `${p}.have`, `out of range [0, ${Math.min(s.chunks, have)}]`);
}

/** The rules the schema cannot say: a holder never has more chunks than the artifact; a stage within them. */
export function checkArtifactHeld(e: ArtifactHeld, p: string): ArtifactHeld {
  if (e.have > e.chunks) throw new ValidationError(W, `${p}.have`, `out of range [0, ${e.chunks}]`);
  if (e.model) checkModelRecord(e.model, `${p}.model`);
  if (e.stage) checkArtifactStage(e.stage, e.chunks, e.have, `${p}.stage`);
  return e;
}
