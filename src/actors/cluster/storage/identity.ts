/**
 * Node identity in the data dir: `identity.json` holds a stable node id (created once) and an incarnation
 * counter bumped on every start, so a restarted node rejoins under the same id and peers can tell the new
 * process from the old one (its stale links are replaced).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomicSync, type DurableFs } from '../../../native/durable-fs.js';
import { join } from 'node:path';
import { TorusError } from '../../../protocols/errors.js';

export interface NodeIdentity {
  readonly nodeId: string;
  readonly incarnation: number;
  readonly createdAt: number;
}

export const IDENTITY_FILE = 'identity.json';
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$/;

export function newNodeId(random: (n: number) => Buffer = randomBytes): string {
  return `n-${random(8).toString('hex')}`;
}

export async function readIdentity(dataDir: string): Promise<NodeIdentity | null> {
  let text: string;
  try {
    text = await readFile(join(dataDir, IDENTITY_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new TorusError('TORUS_CONFIG_INVALID', `${IDENTITY_FILE} in ${dataDir} is not JSON`, { dataDir });
  }
  const r = raw as Partial<NodeIdentity>;
  if (
    typeof r.nodeId !== 'string' ||
    !ID_RE.test(r.nodeId) ||
    !Number.isSafeInteger(r.incarnation) ||
    (r.incarnation as number) < 0
  ) {
    throw new TorusError('TORUS_CONFIG_INVALID', `${IDENTITY_FILE} in ${dataDir} is malformed`, { dataDir });
  }
  return {
    nodeId: r.nodeId,
    incarnation: r.incarnation as number,
    createdAt: typeof r.createdAt === 'number' ? r.createdAt : 0,
  };
}

/** Atomic and durable (temp file, fsync, rename, fsync of the directory): a crash never leaves half a file. */
function writeIdentity(dataDir: string, identity: NodeIdentity, fs?: DurableFs): void {
  writeFileAtomicSync(join(dataDir, IDENTITY_FILE), `${JSON.stringify(identity, null, 2)}\n`, fs ? { fs } : {});
}

/**
 * Loads the identity (creating it on first start, optionally with a requested id) and bumps the incarnation.
 * Returns the identity of *this* process start.
 */
export async function loadOrCreateIdentity(
  dataDir: string,
  options: { nodeId?: string; now?: number; fs?: DurableFs } = {},
): Promise<NodeIdentity> {
  const existing = await readIdentity(dataDir);
  if (options.nodeId !== undefined && !ID_RE.test(options.nodeId)) {
    throw new TorusError('TORUS_CONFIG_INVALID', `node id ${JSON.stringify(options.nodeId)} is not a valid id`, {
      nodeId: options.nodeId,
    });
  }
  const next: NodeIdentity = existing
    ? { ...existing, nodeId: options.nodeId ?? existing.nodeId, incarnation: existing.incarnation + 1 }
    : { nodeId: options.nodeId ?? newNodeId(), incarnation: 1, createdAt: options.now ?? Date.now() };
  writeIdentity(dataDir, next, options.fs);
  return next;
}
