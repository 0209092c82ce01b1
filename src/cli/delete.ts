/** `torus delete ID`: stops every runner of an instance and removes it. */
import { UsageError, parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';

export const DELETE_USAGE = `usage: torus delete ID [--api URL] [--token T | --data-dir DIR] [--json]
  Stops every runner of instance ID and removes it from the cluster.
`;

export async function runDeleteCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, DELETE_USAGE, args, args.includes('--json'), async () => {
    const { values, positionals, client } = parseCli(args, {}, 1);
    const id = positionals[0];
    if (!id) throw new UsageError('missing instance ID');
    const result = await client.request<{ deleted: string }>('DELETE', `/v1/instances/${encodeURIComponent(id)}`);
    if (values.json) printJson(io, result);
    else io.stdout.write(`deleted instance ${result.deleted}\n`);
    return 0;
  });
}
