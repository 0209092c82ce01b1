/** `torus status`: this node, every node with role and memory, every link with type and measured speed, instances with runner states. */
import type { InstanceView, NodeInfo, TopologyView } from '../api/node-facade.js';
import { parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';
import { artifactsOf, nodeProgress } from './instances.js';
import { formatBitsPerSecond, formatBytes, formatDuration, renderTable } from './table.js';

export const STATUS_USAGE = `usage: torus status [--api URL] [--token T | --data-dir DIR] [--json]
  A readable summary of the cluster as the node at --api sees it (default http://127.0.0.1:52515).
  --json  {"node","topology","instances"} as the API returns them
`;

export async function runStatusCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, STATUS_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, {});
    const [node, topology, { instances }] = await Promise.all([
      client.get<NodeInfo>('/v1/node'),
      client.get<TopologyView>('/v1/topology'),
      client.get<{ instances: InstanceView[] }>('/v1/instances'),
    ]);
    if (values.json) {
      printJson(io, { node, topology, instances });
      return 0;
    }
    io.stdout.write(renderStatus(node, topology, instances));
    return 0;
  });
}

/** A device figure with where it came from: `41.2 GB/s measured`, `900 GFLOP/s declared`, `?` when unknown. */
function figure(value: number | undefined, unit: string, source: string | undefined): string {
  if (value === undefined) return '?';
  const shown = value >= 100 ? Math.round(value).toString() : value.toFixed(1);
  return `${shown} ${unit}${source ? ` ${source}` : ''}`;
}

/** A node's calibrated frameworks: `torch 68 GFLOP/s 8.7 GB/s 0.91 ms/layer`, `-` when none (torus kernels only). */
function calibrated(
  byFramework:
    | Readonly<Record<string, { gflops: number; memoryBandwidthGBps: number; layerOverheadMs: number }>>
    | undefined,
): string {
  const entries = Object.entries(byFramework ?? {});
  if (entries.length === 0) return '-';
  return entries
    .map(
      ([fw, f]) =>
        `${fw} ${figure(f.gflops, 'GFLOP/s', undefined)} ${figure(f.memoryBandwidthGBps, 'GB/s', undefined)} ${f.layerOverheadMs.toFixed(2)} ms/layer`,
    )
    .join(', ');
}

export function renderStatus(node: NodeInfo, topology: TopologyView, instances: readonly InstanceView[]): string {
  const names = new Map(topology.nodes.map((n) => [n.id, n.name ?? n.id]));
  const name = (id: string): string => names.get(id) ?? id;
  let out = `node ${node.name} (${node.id}): ${node.role}${node.leaderId && node.leaderId !== node.id ? `, leader ${name(node.leaderId)}` : ''}, v${node.version}, up ${formatDuration(node.uptimeMs)}`;
  out += topology.lastIndex !== undefined ? `, event #${topology.lastIndex}\n` : '\n';
  // Without a quorum the node refuses writes: say so up front, with the counts.
  if (node.quorum && !node.quorum.ok)
    out += `NO QUORUM: ${node.quorum.why ?? `reaches ${node.quorum.reached} of ${node.quorum.members} members, needs ${node.quorum.needed}`} — writes are refused until it returns\n`;
  if (node.clusterUnavailable)
    out += `CLUSTER ACTOR NOT ANSWERING: ${node.clusterUnavailable.code}: ${node.clusterUnavailable.message} — role and quorum unknown\n`;
  out += '\n';
  out += `NODES (${topology.nodes.length})\n`;
  out += renderTable(
    ['ID', 'NAME', 'ROLE', 'MEMORY (available / total)', 'MEM BW', 'COMPUTE', 'CALIBRATED', 'INTERFACES'],
    topology.nodes.map((n) => [
      n.id,
      n.name ?? '',
      n.role ?? (node.leaderId === n.id ? 'leader' : ''),
      n.memory ? `${formatBytes(n.memory.ramAvailable)} / ${formatBytes(n.memory.ramTotal)}` : '?',
      figure(n.device?.memoryBandwidthGBps, 'GB/s', n.device?.memoryBandwidthSource),
      figure(n.device?.gflops, 'GFLOP/s', n.device?.gflopsSource),
      calibrated(n.calibrations),
      (n.interfaces ?? []).map((i) => `${i.name} ${i.ip} ${i.type}`).join(', '),
    ]),
  );
  out += `\nLINKS (${topology.links.length})\n`;
  out += renderTable(
    ['FROM', 'TO', 'ADDRESS', 'TYPE', 'BANDWIDTH', 'RTT'],
    topology.links.map((l) => [
      name(l.source),
      name(l.sink),
      l.ip ?? '',
      l.type ?? 'unknown',
      formatBitsPerSecond(l.bandwidthBps),
      l.rttMs === undefined ? '' : `${l.rttMs.toFixed(2)} ms`,
    ]),
  );
  out += `\nINSTANCES (${instances.length})\n`;
  out += renderTable(
    ['ID', 'BACKEND', 'SHARDING', 'STATUS', 'RING ORDER', 'RUNNERS'],
    instances.map((i) => [
      i.id,
      i.backend ?? '',
      i.sharding ?? '',
      i.status ?? '',
      i.nodes.map(name).join(' → '),
      i.runners.map((r) => `${name(r.node)}=${r.status}${r.reason ? ` (${r.reason})` : ''}`).join(', '),
    ]),
  );
  // A model workload: which layers each placed node holds and how far its stage has come (runners wait for it).
  for (const i of instances)
    for (const a of artifactsOf(i).filter((x) => x.nodes.some((n) => n.layers))) {
      const stages = a.nodes.map((n) => `${name(n.node)} ${nodeProgress(a, n)}`).join(', ');
      out += `  ${i.id}: model ${a.name}: ${stages}\n`;
    }
  return out;
}
