/**
 * The files a node keeps in its data dir that other programs on the same machine read: the local CLI (`status`,
 * `token`) and the lab's node processes find the API token there, `token` the secret. Their names and readers
 * live here, below every program that needs them; writing them is the node's own business (node/credentials.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_FILE = 'cluster.secret';
export const API_TOKEN_FILE = 'api-token';

function readSaved(dataDir: string, file: string, tolerated: readonly string[] = ['ENOENT']): string | undefined {
  try {
    const text = readFileSync(join(dataDir, file), 'utf8').trim();
    return text === '' ? undefined : text;
  } catch (error) {
    if (tolerated.includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
}

export function readSecretIn(dataDir: string): string | undefined {
  return readSaved(dataDir, SECRET_FILE);
}

/** The API token a node on this machine saved in its data dir (what the local CLI uses; unreadable = none). */
export function readApiTokenIn(dataDir: string): string | undefined {
  return readSaved(dataDir, API_TOKEN_FILE, ['ENOENT', 'EACCES']);
}
