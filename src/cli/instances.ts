/** `torus instances [ID]`: every instance (or one) with its ring order and runner states. */
import type { InstanceView } from '../api/node-facade.js';
import { parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';
import type { InstanceArtifactNode, InstanceArtifactView } from '../artifacts/instance-progress.js';
import { formatBytes, renderTable } from './table.js';

export const INSTANCES_USAGE = `usage: torus instances [ID] [--api URL] [--token T | --data-dir DIR] [--json]
  Lists instances with ring order and runner states; with ID, that instance's runners.
`;

export async function runInstancesCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, INSTANCES_USAGE, args, args.includes('--json'), async () => {
    const { values, positionals, client } = parseCli(args, {}, 1);
    const id = positionals[0];
    const instances = id
      ? [await client.get<InstanceView>(`/v1/instances/${encodeURIComponent(id)}`)]
      : (await client.get<{ instances: InstanceView[] }>('/v1/instances')).instances;
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
    // The ARTIFACTS column only when some instance lists artifacts (the table stays as it was otherwise).
    const withArtifacts = instances.some((i) => artifactsOf(i).length > 0);
    return renderTable(
      [
        'ID',
        'BACKEND',
        'SHARDING',
        'STATUS',
        'JOB',
        'EXIT',
        'RING ORDER',
        'RUNNERS',
        ...(withArtifacts ? ['ARTIFACTS'] : []),
      ],
      instances.map((i) => [
        i.id,
        i.backend ?? '',
        i.sharding ?? '',
        i.status ?? '',
        jobOf(i)?.state ?? '',
        exitOf(i.exitCode),
        i.nodes.join(' → '),
        summarise(i),
        ...(withArtifacts ? [artifactSummary(artifactsOf(i))] : []),
      ]),
    );
  }
  return instances
    .map(
      (i) =>
        `instance ${i.id}: ${i.backend ?? '?'} / ${i.sharding ?? '?'}, ${i.status ?? ''}${typeof i.reason === 'string' ? ` (${i.reason})` : ''}\n` +
        (jobOf(i)
          ? `job ${jobOf(i)!.state}, exit code ${exitOf(i.exitCode) || '-'}, restarts ${jobOf(i)!.restarts ?? 0}\n`
          : '') +
        renderTable(
          ['RANK', 'NODE', 'STATUS', 'EXIT', 'RESTARTS', 'REASON'],
          i.runners.map((r) => [
            String(r.rank ?? '?'),
            r.node,
            r.status,
            exitOf(r.exitCode),
            String(r.restarts ?? 0),
            r.reason ?? '',
          ]),
        ) +
        artifactsOf(i)
          .map(
            (a) =>
              `artifact ${a.name} (${a.id.slice(0, 12)}, ${formatBytes(a.bytes)}): ${a.nodes.map((n) => `${n.node} ${nodeProgress(a, n)}`).join(', ')}\n`,
          )
          .join(''),
    )
    .join('\n');
}

const jobOf = (i: InstanceView): { state: string; restarts?: number } | undefined =>
  i.job && typeof i.job === 'object' ? (i.job as { state: string; restarts?: number }) : undefined;
const exitOf = (code: unknown): string => (typeof code === 'number' ? String(code) : '');

/** "3 Ready, 1 Failed" */
function summarise(i: InstanceView): string {
  const counts = new Map<string, number>();
  for (const r of i.runners) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
}

export const artifactsOf = (i: InstanceView): readonly InstanceArtifactView[] =>
  Array.isArray(i.artifacts) ? (i.artifacts as InstanceArtifactView[]) : [];
const percent = (have: number, total: number): string =>
  `${total > 0 ? (Math.floor((have / total) * 1000) / 10).toFixed(1) : '100.0'}%`;

/** "held" or "42.0% 1.1 GiB at 112 MiB/s" */
export function nodeProgress(a: InstanceArtifactView, n: InstanceArtifactNode): string {
  const layers = n.layers ? ` (layers ${n.layers[0]}-${n.layers[1]})` : '';
  if (n.complete) return `held${layers}`;
  return `${percent(n.haveBytes, n.bytes ?? a.bytes)} ${formatBytes(n.haveBytes)}${n.rateBps ? ` at ${formatBytes(n.rateBps)}/s` : ''}${layers}`;
}

/** Over every artifact and placed node: "held" or "61.3% at 220 MiB/s". */
function artifactSummary(list: readonly InstanceArtifactView[]): string {
  if (list.length === 0) return '';
  const nodes = list.flatMap((a) => a.nodes.map((n) => ({ a, n })));
  if (nodes.every(({ n }) => n.complete)) return 'held';
  const have = nodes.reduce((s, { n }) => s + n.haveBytes, 0);
  const total = nodes.reduce((s, { a, n }) => s + (n.bytes ?? a.bytes), 0);
  const rate = nodes.reduce((s, { n }) => s + (n.rateBps ?? 0), 0);
  return `${percent(have, total)}${rate > 0 ? ` at ${formatBytes(rate)}/s` : ''}`;
}
