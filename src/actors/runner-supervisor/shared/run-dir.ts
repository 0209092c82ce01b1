/**
 * Where a runner's files live on disk. Shared: the supervisor thread writes there (hostfile, rotated logs), the main
 * thread reads the logs for the API, and the run collector removes finished runs.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';

/** Percent-style escaping of everything but [A-Za-z0-9._-] ('@' included): injective, and safe as a file name. */
const escapeId = (id: string): string =>
  id.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
/** File names stay under the usual 255-byte limit; longer names keep a prefix plus a hash of both ids. */
const MAX_NAME = 200;

/**
 * `<dataDir>/runners/<instance>@<node>/` (hostfile.json, stdout.*.log, stderr.*.log), each id escaped so that distinct
 * (instance, node) pairs never share a directory (`a:b` and `a_b` used to). Over-long names end in `~<hash>`;
 * `~` never appears in an escaped id, so a hashed name cannot equal a plain one.
 */
export function runnerDir(dataDir: string, instanceId: string, nodeId: string): string {
  let name = `${escapeId(instanceId)}@${escapeId(nodeId)}`;
  if (name.length > MAX_NAME)
    name = `${name.slice(0, MAX_NAME - 34)}~${createHash('sha256').update(`${instanceId}\0${nodeId}`).digest('hex').slice(0, 32)}`;
  return join(dataDir, 'runners', name);
}
