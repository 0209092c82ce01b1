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
  },
  CLOSED,
);
export type ArtifactHeld = Shape<typeof ArtifactHeld>;

export const ArtifactDropped = Type.Object(
  { type: Type.Literal('ArtifactDropped'), nodeId: Id, artifactId: ArtifactId, reason: Reason },
  CLOSED,
);
export type ArtifactDropped = Shape<typeof ArtifactDropped>;

/** The rule the schema cannot say: a holder never has more chunks than the artifact. */
export function checkArtifactHeld(e: ArtifactHeld, p: string): ArtifactHeld {
  if (e.have > e.chunks) throw new ValidationError(W, `${p}.have`, `out of range [0, ${e.chunks}]`);
  if (e.model) checkModelRecord(e.model, `${p}.model`);
  return e;
}
