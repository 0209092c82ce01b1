/**
 * Appliers for artifact holdings. Total and deterministic: facts about unknown nodes change nothing; a
 * holding whose size or chunk count contradicts the artifact's record is ignored (every honest holder reports the
 * figures of the same manifest); the `artifacts` key is absent while no node holds anything, so states without
 * artifacts keep the digest they had before artifacts existed.
 */
import type { ArtifactDropped, ArtifactHeld } from '../../protocols/events.js';
import { compact, own, withEntry, withoutEntry, type ArtifactRecord, type ClusterState } from './state.js';

type At = number | undefined;

function withArtifacts(state: ClusterState, artifacts: Readonly<Record<string, ArtifactRecord>>): ClusterState {
  if (Object.keys(artifacts).length > 0) return { ...state, artifacts };
  const { artifacts: _gone, ...rest } = state;
  return rest;
}

export function applyArtifactHeld(state: ClusterState, e: ArtifactHeld, at: At): ClusterState {
  const node = own(state.nodes, e.nodeId);
  if (!node || (e.incarnation !== undefined && e.incarnation !== node.incarnation)) return state;
  const all = state.artifacts ?? {};
  const prev = own(all, e.artifactId);
  if (prev && (prev.bytes !== e.bytes || prev.chunks !== e.chunks)) return state;
  // A model record is a function of the bytes: the first one stays (every honest holder sends the same).
  const model = prev?.model ?? e.model;
  // A stage past the model's layers contradicts the record: ignored like a contradicting size.
  if (e.stage && model && e.stage.toLayer > model.layers) return state;
  const holders = withEntry(
    prev?.holders ?? {},
    e.nodeId,
    compact({ have: e.have, since: at, rateBps: e.rateBps, stage: e.stage }),
  );
  return withArtifacts(
    state,
    withEntry(all, e.artifactId, {
      name: e.name,
      bytes: e.bytes,
      chunks: e.chunks,
      holders,
      ...(model ? { model } : {}),
    }),
  );
}

export function applyArtifactDropped(state: ClusterState, e: ArtifactDropped): ClusterState {
  return dropHolder(state, e.artifactId, e.nodeId);
}

function dropHolder(state: ClusterState, artifactId: string, nodeId: string): ClusterState {
  const all = state.artifacts ?? {};
  const prev = own(all, artifactId);
  if (!prev || !own(prev.holders, nodeId)) return state;
  const holders = withoutEntry(prev.holders, nodeId);
  return withArtifacts(
    state,
    Object.keys(holders).length === 0
      ? withoutEntry(all, artifactId)
      : withEntry(all, artifactId, { ...prev, holders }),
  );
}

/** A node that left holds nothing any more (it cannot serve); it announces its store again when it re-joins. */
export function dropNodeHoldings(state: ClusterState, nodeId: string): ClusterState {
  let s = state;
  for (const id of Object.keys(state.artifacts ?? {})) s = dropHolder(s, id, nodeId);
  return s;
}
