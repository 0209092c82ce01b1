/** `torus measure`: asks this node's profiler to re-measure its links now (POST /v1/links/measure). */
import type { MeasureLinksAnswer, TopologyView } from '../api/node-facade.js';
import type { NodeInfo } from '../api/node-facade.js';
import { UsageError, parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';
import { formatBitsPerSecond, renderTable } from './table.js';

export const MEASURE_USAGE = `usage: torus measure [--peer ID] [--ip ADDR] [--wait] [--api URL] [--token T | --data-dir DIR] [--json]
  Re-measures this node's links now (RTT and bandwidth): all of them, those to one peer (--peer), the one at
  one address (--ip), or both filters. With --wait, waits (up to 60 s) for the new figures and prints them.
`;

export async function runMeasureCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, MEASURE_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, { peer: { type: 'string' }, ip: { type: 'string' }, wait: { type: 'boolean' } });
    const body = { ...(typeof values.peer === 'string' ? { peer: values.peer } : {}), ...(typeof values.ip === 'string' ? { ip: values.ip } : {}) };
    if (values.peer === '' || values.ip === '') throw new UsageError('--peer and --ip need a value');
    const queued = await client.request<MeasureLinksAnswer>('POST', '/v1/links/measure', body);
    if (!values.wait) {
      if (values.json) printJson(io, queued);
      else io.stdout.write(`measuring ${queued.links.length} link(s): ${queued.links.map((l) => `${l.sink} at ${l.ip}`).join(', ') || 'none'}\n`);
      return 0;
    }
    const self = (await client.get<NodeInfo>('/v1/node')).id;
    const before = new Map(queued.links.map((l) => [`${l.sink}|${l.ip}`, l.measuredAt ?? -1]));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const topology = await client.get<TopologyView>('/v1/topology');
      const key = (l: { sink: string; ip?: string | undefined }): string => `${l.sink}|${l.ip}`;
      const mine = topology.links.filter((l) => l.source === self && before.has(key(l)) && (l.measuredAt ?? -1) > before.get(key(l))!);
      if (mine.length >= before.size || Date.now() > deadline) {
        if (values.json) printJson(io, { links: mine, pending: before.size - mine.length });
        else {
          io.stdout.write(renderTable(['SINK', 'ADDRESS', 'TYPE', 'BANDWIDTH', 'RTT'], mine.map((l) => [l.sink, l.ip ?? '', l.type ?? 'unknown', formatBitsPerSecond(l.bandwidthBps), l.rttMs === undefined ? '' : `${l.rttMs.toFixed(2)} ms`])));
          if (mine.length < before.size) io.stderr.write(`${before.size - mine.length} link(s) not re-measured within 60 s\n`);
        }
        return mine.length < before.size ? 1 : 0;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  });
}
