/** `torus instances [ID]`: every instance (or one) with its ring order and runner states. */
import type { InstanceView } from '../api/node-facade.js';
import { parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';
import { renderTable } from './table.js';

export const INSTANCES_USAGE = `usage: torus instances [ID] [--api URL] [--token T | --data-dir DIR] [--json]
  Lists instances with ring order and runner states; with ID, that instance's runners.
`;

export async function runInstancesCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, INSTANCES_USAGE, args, args.includes('--json'), async () => {
    const { values, positionals, client } = parseCli(args, {}, 1);
    const id = positionals[0];
    const instances = id ? [await client.get<InstanceView>(`/v1/instances/${encodeURIComponent(id)}`)] : (await client.get<{ instances: InstanceView[] }>('/v1/instances')).instances;
    if (values.json) {
      printJson(io, id ? instances[0] : { instances });
      return 0;
    }
    io.stdout.write(renderInstances(instances, Boolean(id)));
    return 0;
  });
}

export function renderInstances(instances: readonly InstanceView[], detailed: boolean): string {
  if (!detailed) {
    return renderTable(
      ['ID', 'BACKEND', 'SHARDING', 'STATUS', 'RING ORDER', 'RUNNERS'],
      instances.map((i) => [i.id, i.backend ?? '', i.sharding ?? '', i.status ?? '', i.nodes.join(' → '), summarise(i)]),
    );
  }
  return instances
    .map((i) => `instance ${i.id}: ${i.backend ?? '?'} / ${i.sharding ?? '?'}, ${i.status ?? ''}${typeof i.reason === 'string' ? ` (${i.reason})` : ''}\n` +
      renderTable(['RANK', 'NODE', 'STATUS', 'RESTARTS', 'REASON'], i.runners.map((r) => [String(r.rank ?? '?'), r.node, r.status, String(r.restarts ?? 0), r.reason ?? ''])))
    .join('\n');
}

/** "3 Ready, 1 Failed" */
function summarise(i: InstanceView): string {
  const counts = new Map<string, number>();
  for (const r of i.runners) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
}
