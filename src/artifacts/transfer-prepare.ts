/**
 * The start of a transfer: the manifest fetched from a source, the writer opened (a stage's chunk set as its
 * target, the copy's goal kept for a restart) and the disk space checked, before any chunk moves.
 */
import { rmSync } from 'node:fs';
import { TorusError } from '../protocols/errors.js';
import type { ChunkHasher, RunCpuTask } from './chunk-hasher.js';
import type { Forwarding } from './forwarding.js';
import { writeInfo } from './layout.js';
import { decodeManifest, totalBytes } from './manifest.js';
import type { ModelStages } from './model-stages.js';
import type { PeerClient } from './peer-client.js';
import { MAX_CHUNK_WAIT_MS } from './peer-paths.js';
import type { ArtifactStore } from './store.js';
import type { TransferStatus } from './transfer-status.js';
import type { TransferSource } from './transfer.js';
import { ArtifactWriter } from './writer.js';

export interface PrepareDeps {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly store: ArtifactStore;
  readonly client: PeerClient;
  readonly hash: ChunkHasher;
  readonly runCpuTask?: RunCpuTask | undefined;
  readonly stages: ModelStages;
  readonly forwarding: Forwarding;
  readonly signal: AbortSignal;
}

/**
 * The opened writer and, for a stage, the chunks it is to receive (`status` now running, counting those); throws
 * (nothing left open) on a refusal.
 */
export async function prepareTransfer(
  d: PrepareDeps,
  id: string,
  status: TransferStatus,
  sources: readonly TransferSource[],
): Promise<{ writer: ArtifactWriter; target: Uint8Array | undefined }> {
  // The pool starts its threads on first use (~0.1 s here): start one now, while the manifest is fetched, rather
  // than when the first chunks arrive and wait for it.
  void d.runCpuTask?.('runtime.echo', null).catch(() => {});
  const manifestBytes = await fetchManifest(d, id, status, sources);
  const manifest = decodeManifest(manifestBytes, id);
  const fresh = !d.store.info(id);
  const writer = ArtifactWriter.create(
    d.store.root,
    id,
    manifest,
    manifestBytes,
    { name: status.name, addedAt: Date.now() },
    {
      hash: d.hash,
      onWritten: (index, data) => d.forwarding.written(id, index, data, (b) => d.client.release(b)),
    },
  );
  d.stages.writePending(id);
  let target: Uint8Array | undefined;
  if (status.stage) {
    try {
      target = d.stages.stageSet(id, status.stage);
    } catch (error) {
      await writer.close();
      throw error;
    }
  }
  writer.setTarget(target);
  const info = d.store.info(id);
  // The copy's goal, kept for a restart: this stage, or (a whole fetch) the whole artifact.
  if (info && !info.complete) {
    const { stage: _old, ...rest } = info;
    writeInfo(d.store.paths(id).info, { ...rest, ...(status.stage ? { stage: status.stage } : {}) });
  }
  const targetBytes = target
    ? writer.refs.reduce((a, r, i) => a + (target[i] ? r.length : 0), 0)
    : totalBytes(manifest);
  const missing = targetBytes - writer.targetBytes;
  const free = await d.store.freeBytes();
  if (free < missing) {
    await writer.close();
    if (fresh) rmSync(d.store.paths(id).dir, { recursive: true, force: true });
    throw new TorusError(
      'TORUS_ARTIFACT_NO_SPACE',
      `node ${d.nodeName} (${d.nodeId}) cannot receive artifact ${id}: it needs ${missing} bytes, ${free} are free in ${d.store.root}: ${missing - free} bytes missing`,
      { node: d.nodeId, id, neededBytes: missing, freeBytes: free, missingBytes: missing - free },
    );
  }
  Object.assign(status, {
    state: 'running',
    chunks: target ? target.reduce((a, x) => a + x, 0) : writer.refs.length,
    bytes: targetBytes,
    have: writer.targetCount,
    haveBytes: writer.targetBytes,
  });
  return { writer, target };
}

/** The manifest: the store's, else the first source's that decodes. */
async function fetchManifest(
  d: PrepareDeps,
  id: string,
  status: TransferStatus,
  sources: readonly TransferSource[],
): Promise<Buffer> {
  let manifestBytes = d.store.manifest(id)?.bytes;
  // A chain's upstream may not have started its own transfer yet (each node starts on its own): while no source
  // has the manifest, ask again for as long as a chunk request would wait for that upstream.
  const waitUntil = Date.now() + (sources.some((s) => s.waitForChunks) ? MAX_CHUNK_WAIT_MS : 0);
  for (;;) {
    for (const s of sources) {
      if (manifestBytes) break;
      for (const url of s.urls) {
        try {
          manifestBytes = Buffer.from(await d.client.manifest(url, id));
          decodeManifest(manifestBytes, id);
          break;
        } catch {
          manifestBytes = undefined;
        }
      }
    }
    if (manifestBytes || Date.now() >= waitUntil || d.signal.aborted) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!manifestBytes)
    throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `no holder of ${id} answered with its manifest`, {
      id,
      sources: status.sources,
    });
  return manifestBytes;
}
