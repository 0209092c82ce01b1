/**
 * Node identity: a random id persisted in the data dir (the same after every restart) and an incarnation
 * number bumped on every start, so peers can tell a restarted node from a stale one.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../core/errors.js';

export interface NodeIdentity {
  readonly nodeId: string;
  readonly incarnation: number;
  /** Epoch ms of this start (election prefers the longest-lived node). */
  readonly startedAt: number;
}

const FILE = 'identity.json';
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{2,63}$/;

export function loadOrCreateIdentity(dataDir: string, now: number = Date.now()): NodeIdentity {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, FILE);
  let nodeId: string = randomUUID();
  let incarnation = 0;
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // first start: a new id
  }
  if (text !== undefined) {
    let stored: { nodeId?: unknown; incarnation?: unknown };
    try {
      stored = JSON.parse(text) as typeof stored;
    } catch (error) {
      throw new ValidationError('config', path, `corrupt identity file: ${(error as Error).message}`);
    }
    if (typeof stored.nodeId !== 'string' || !ID_PATTERN.test(stored.nodeId)) throw new ValidationError('config', `${path}.nodeId`, 'expected a node id');
    if (typeof stored.incarnation !== 'number' || !Number.isSafeInteger(stored.incarnation) || stored.incarnation < 0) {
      throw new ValidationError('config', `${path}.incarnation`, 'expected a non-negative integer');
    }
    nodeId = stored.nodeId;
    incarnation = stored.incarnation;
  }
  const identity: NodeIdentity = { nodeId, incarnation: incarnation + 1, startedAt: now };
  // Write-then-rename so a crash mid-write never leaves a corrupt identity.
  writeFileSync(`${path}.tmp`, JSON.stringify({ nodeId: identity.nodeId, incarnation: identity.incarnation }) + '\n');
  renameSync(`${path}.tmp`, path);
  return identity;
}
