/**
 * The store's layout on disk (`<dataDir>/artifacts/`):
 *
 *   <id>/manifest.json   the canonical manifest bytes (sha256 = id)
 *   <id>/info.json       { name, addedAt, complete } (written atomically)
 *   <id>/files/<path>    the artifact's files
 *   <id>/verified.log    while partial: uint32 LE indices of chunks verified and on disk
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
  };
}

export function writeInfo(path: string, info: ArtifactInfo): void {
  writeFileAtomicSync(path, JSON.stringify(info), { mode: 0o600 });
}

export function readInfo(path: string): ArtifactInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<ArtifactInfo>;
    if (typeof v.name !== 'string' || typeof v.complete !== 'boolean') return undefined;
    return { name: v.name, addedAt: typeof v.addedAt === 'number' ? v.addedAt : 0, complete: v.complete };
  } catch {
    return undefined;
  }
}
