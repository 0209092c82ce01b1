/**
 * Which commands a node runs as `exec` workloads (exec is off by default, like Nomad's raw_exec).
 * `false`: none; `true`: any; a list: only commands whose basename or absolute path is on it. Pure, so the
 * runner supervisor (at spawn time, the enforcement) and the leader's placement filter decide the same way.
 */
import { basename, isAbsolute } from 'node:path';
import { commaList } from './comma-list.js';

export type ExecPolicy = boolean | readonly string[];

/** Runners one node holds at once (`--max-runners`). */
export const DEFAULT_MAX_RUNNERS = 8;
/** Live instances in the cluster, checked by the leader (`--max-instances`). */
export const DEFAULT_MAX_INSTANCES = 64;

export type ExecDecision = { readonly allowed: true } | { readonly allowed: false; readonly rule: string };

/** How the policy reads as the flag that sets it (for refusals and logs). */
export function describeExecPolicy(policy: ExecPolicy | undefined): string {
  if (policy === true) return '--allow-exec';
  if (policy === undefined || policy === false || policy.length === 0) return 'exec is off (no --allow-exec)';
  return `--allow-exec=${policy.join(',')}`;
}

/**
 * An entry with a slash matches the command's exact absolute path; a bare entry matches the basename of a bare
 * or absolute command. A relative path (`./python3`) matches only an entry naming it exactly: what it runs
 * depends on the working directory. An unknown policy (a node that never said) allows nothing.
 */
export function execDecision(policy: ExecPolicy | undefined, command: string): ExecDecision {
  if (policy === true) return { allowed: true };
  const rule = describeExecPolicy(policy);
  if (policy === undefined || policy === false) return { allowed: false, rule };
  const base = basename(command);
  const bareOrAbsolute = !command.includes('/') || isAbsolute(command);
  const ok = policy.some((entry) => entry === command || (!entry.includes('/') && bareOrAbsolute && entry === base));
  return ok ? { allowed: true } : { allowed: false, rule: `${JSON.stringify(command)} is not allowed by ${rule}` };
}

/** Parses the flag or config value: boolean, or a comma-separated list / array of commands. Throws a message. */
export function parseExecPolicy(value: unknown): ExecPolicy {
  if (typeof value === 'boolean') return value;
  const list = commaList(value);
  if (!list || list.length === 0) throw new Error('expected true, false or a comma-separated list of commands');
  if (list.length > 256) throw new Error('at most 256 commands');
  for (const entry of list) {
    if (typeof entry !== 'string' || entry === '' || entry.length > 1024 || /[\s,]/.test(entry)) {
      throw new Error(`expected command names or absolute paths, got ${JSON.stringify(entry)}`);
    }
    if (entry.includes('/') && !isAbsolute(entry)) throw new Error(`a path must be absolute: ${JSON.stringify(entry)}`);
  }
  return [...new Set(list as string[])];
}
