/** `torus members remove ID [ID...]`: the operator's removal of dead members (docs/cluster.md, Removing a member). */
import { UsageError, parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';

export const MEMBERS_USAGE = `usage: torus members remove ID [ID...] [--api URL] [--token T] [--json]
  Removes dead members from the cluster's membership, so the live nodes can reach a quorum again (after members
  vanished for good, or a poisoned membership). Only for nodes that are gone: a removed node that still runs
  elsewhere could form a second majority. Refused for the node answering, unknown ids and connected members.
`;

interface Answer {
  readonly nodeId: string;
  readonly status: 'removed' | 'pending';
  readonly message: string;
}

export async function runMembersCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, MEMBERS_USAGE, args, args.includes('--json'), async () => {
    const { values, positionals, client } = parseCli(args, {}, 64);
    const [verb, ...ids] = positionals;
    if (verb !== 'remove') throw new UsageError(verb ? `unknown members command ${verb}` : 'missing command (remove)');
    if (ids.length === 0) throw new UsageError('missing member ID');
    const answers: Answer[] = [];
    // One at a time: each removal may change who can lead, and the next one depends on it.
    for (const id of ids) answers.push(await client.request<Answer>('DELETE', `/v1/members/${encodeURIComponent(id)}`));
    if (values.json) printJson(io, answers);
    else
      for (const a of answers)
        io.stdout.write(`${a.status === 'removed' ? 'removed' : 'pending'} ${a.nodeId}: ${a.message}\n`);
    return 0;
  });
}
