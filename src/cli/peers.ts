/** `torus peers`: nodes that were heard but did not join, and why (other cluster, version, auth, unreachable). */
import type { PeerView } from '../api/node-facade.js';
import { parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';
import { renderTable } from './table.js';

export const PEERS_USAGE = `usage: torus peers [--api URL] [--token T | --data-dir DIR] [--json]
  Nodes heard on the network that did not join this cluster, with the reason.
`;

export async function runPeersCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, PEERS_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, {});
    const { peers } = await client.get<{ peers: PeerView[] }>('/v1/peers');
    if (values.json) {
      printJson(io, { peers });
      return 0;
    }
    io.stdout.write(`heard but not joined (${peers.length})\n`);
    const now = Date.now();
    io.stdout.write(
      renderTable(
        ['ADDRESS', 'ID', 'REASON', 'DETAIL', 'LAST HEARD', 'RETRY'],
        peers.map((p) => [
          p.address,
          p.id ?? '?',
          p.reason,
          p.detail ?? '',
          p.at === undefined ? '' : new Date(p.at).toISOString(),
          p.nextRetryAt === undefined
            ? ''
            : `#${(p.attempts ?? 0) + 1} in ${Math.max(0, Math.round((p.nextRetryAt - now) / 1000))} s`,
        ]),
      ),
    );
    return 0;
  });
}
