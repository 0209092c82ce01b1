/**
 * The store's layout on disk (`<dataDir>/artifacts/`):
 *
 *   <id>/manifest.json   the canonical manifest bytes (sha256 = id)
 *   <id>/info.json       { name, addedAt, complete, stage? } (written atomically)
 *   <id>/files/<path>    the artifact's files
 *   <id>/verified.log    while partial: uint32 LE indices of chunks verified and on disk
 *   <id>/model.json      a model artifact's record
 *   <id>/shards/layers-<from>-<to>/   a pipeline stage's shard directory (a runner's TORUS_MODEL_DIR)
 *   .staging-*           `artifacts add` builds here, then renames into <id>
 *
 * Only directories named by a valid id are ever read as artifacts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../native/durable-fs.js';

export interface ArtifactInfo {
  readonly name: string;
  readonly addedAt: number;
  readonly complete: boolean;
  /**
   * A partial model artifact held for a pipeline stage (layers [fromLayer, toLayer)): only that stage's chunks are
   * fetched, and a restart resumes only them. Absent: a partial copy is on its way to the whole artifact.
   */
  readonly stage?: { readonly fromLayer: number; readonly toLayer: number };
}

export function storeRoot(dataDir: string): string {
  return join(dataDir, 'artifacts');
}

export function artifactPaths(root: string, id: string) {
  const dir = join(root, id);
  return {
    dir,
    manifest: join(dir, 'manifest.json'),
    info: join(dir, 'info.json'),
    files: join(dir, 'files'),
    journal: join(dir, 'verified.log'),
    shards: join(dir, 'shards'),
  };
}

export function writeInfo(path: string, info: ArtifactInfo): void {
  writeFileAtomicSync(path, JSON.stringify(info), { mode: 0o600 });
}

export function readInfo(path: string): ArtifactInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<ArtifactInfo>;
    if (typeof v.name !== 'string' || typeof v.complete !== 'boolean') return undefined;
    const s = v.stage;
    const stage =
      s &&
      Number.isSafeInteger(s.fromLayer) &&
      Number.isSafeInteger(s.toLayer) &&
      0 <= s.fromLayer &&
      s.fromLayer < s.toLayer
        ? { fromLayer: s.fromLayer, toLayer: s.toLayer }
        : undefined;
    return {
      name: v.name,
      addedAt: typeof v.addedAt === 'number' ? v.addedAt : 0,
      complete: v.complete,
      ...(stage && !v.complete ? { stage } : {}),
    };
  } catch {
    return undefined;
  }
}
