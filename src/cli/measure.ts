/** `torus measure`: asks this node's profiler to re-measure its links now (POST /v1/links/measure). */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IndexedEvent, MeasureLinksAnswer, NodeInfo, TopologyLinkView, TopologyView } from '../api/node-facade.js';
import { UsageError, parseCli, printJson, processIo, runCli, type ApiClient, type CliIo } from './api-client.js';
import { readSse } from './sse-client.js';
import { formatBitsPerSecond } from './table.js';

export const MEASURE_USAGE = `usage: torus measure [--peer ID] [--ip ADDR] [--wait] [--api URL] [--token T | --data-dir DIR] [--json]
  Re-measures this node's links now (RTT and bandwidth): all of them, those to one peer (--peer), the one at
  one address (--ip), or both filters. With --wait, prints each link as it is measured (up to 60 s).
`;

const WAIT_MS = 60_000;
/** The events stream shows each measurement as it lands; polling the topology covers a stream a proxy cuts. */
const POLL_MS = 1000;

type Queued = MeasureLinksAnswer['links'][number];
/** A link as measured: from the topology (with its interface type) or from a LinkMeasured event (without). */
type Measured = Pick<TopologyLinkView, 'source' | 'sink' | 'ip' | 'rttMs' | 'bandwidthBps' | 'measuredAt'> & {
  readonly type?: TopologyLinkView['type'];
};

const keyOf = (l: { sink: string; ip?: string | undefined }): string => `${l.sink}|${l.ip ?? ''}`;

export function formatMeasuredLine(l: Measured): string {
  const rtt = l.rttMs === undefined ? 'RTT ?' : `RTT ${l.rttMs.toFixed(2)} ms`;
  return `measured ${l.sink} at ${l.ip ?? '?'} (${l.type ?? 'unknown'}): ${formatBitsPerSecond(l.bandwidthBps)}, ${rtt}\n`;
}

export async function runMeasureCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, MEASURE_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, {
      peer: { type: 'string' },
      ip: { type: 'string' },
      wait: { type: 'boolean' },
    });
    const body = {
      ...(typeof values.peer === 'string' ? { peer: values.peer } : {}),
      ...(typeof values.ip === 'string' ? { ip: values.ip } : {}),
    };
    if (values.peer === '' || values.ip === '') throw new UsageError('--peer and --ip need a value');
    if (!values.wait) {
      const queued = await client.request<MeasureLinksAnswer>('POST', '/v1/links/measure', body);
      if (values.json) printJson(io, queued);
      else
        io.stdout.write(
          `measuring ${queued.links.length} link(s): ${queued.links.map((l) => `${l.sink} at ${l.ip}`).join(', ') || 'none'}\n`,
        );
      return 0;
    }
    const { measured, pending } = await measureAndWait(
      client,
      body,
      values.json ? undefined : (l) => io.stdout.write(formatMeasuredLine(l)),
    );
    if (values.json) printJson(io, { links: measured, pending: pending.length });
    else if (pending.length > 0)
      io.stderr.write(
        `${pending.length} link(s) not re-measured within ${WAIT_MS / 1000} s: ${pending.map((l) => `${l.sink} at ${l.ip}`).join(', ')}\n`,
      );
    else if (measured.length === 0) io.stdout.write('no links to measure\n');
    return pending.length > 0 ? 1 : 0;
  });
}

/**
 * Subscribes to the events stream *before* asking (so no LinkMeasured is missed), asks, then reports each
 * queued link once, as soon as a measurement newer than the one it had lands, until all are in or 60 s pass.
 */
async function measureAndWait(
  client: ApiClient,
  body: object,
  onMeasured?: (l: Measured) => void,
): Promise<{ measured: Measured[]; pending: Queued[] }> {
  const self = (await client.get<NodeInfo>('/v1/node')).id;
  const { lastIndex } = await client.get<TopologyView>('/v1/topology');
  const abort = new AbortController();
  const early: Measured[] = [];
  let waiting: Map<string, Queued> | undefined;
  const measured: Measured[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const offer = (l: Measured): void => {
    if (l.source !== self) return;
    if (!waiting) return void early.push(l);
    const queued = waiting.get(keyOf(l));
    if (!queued || (l.measuredAt ?? -1) <= (queued.measuredAt ?? -1)) return; // not asked for, or an older figure
    waiting.delete(keyOf(l));
    const link = { ...l, type: l.type ?? queued.type };
    measured.push(link);
    onMeasured?.(link);
    if (waiting.size === 0) resolveDone();
  };
  const stream = (async () => {
    for await (const item of readSse(client.url(`/v1/events?after=${lastIndex ?? 0}`), {
      headers: client.authHeaders,
      agent: client.agent,
      signal: abort.signal,
    })) {
      if (!('event' in item) || item.event !== 'message') continue;
      const { event } = JSON.parse(item.data) as IndexedEvent;
      if (event.type === 'LinkMeasured')
        offer({
          source: event.source,
          sink: event.sink,
          ip: event.ip,
          rttMs: event.rttMs,
          bandwidthBps: event.bandwidthBps,
          measuredAt: event.measuredAt,
        });
    }
  })().catch(() => undefined); // the poll below still finishes the job
  try {
    const queued = await client.request<MeasureLinksAnswer>('POST', '/v1/links/measure', body);
    waiting = new Map(queued.links.map((l) => [keyOf(l), l]));
    if (waiting.size === 0) resolveDone();
    for (const l of early.splice(0)) offer(l);
    const deadline = Date.now() + WAIT_MS;
    const poll = (async () => {
      while (!abort.signal.aborted && Date.now() < deadline) {
        await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal: abort.signal }).catch(
          () => undefined,
        );
        if (abort.signal.aborted) return;
        const topology = await client.get<TopologyView>('/v1/topology').catch(() => undefined);
        for (const l of topology?.links ?? []) offer(l);
      }
      resolveDone(); // out of time: report what is still pending
    })();
    await done;
    abort.abort();
    await Promise.all([stream, poll]);
    return { measured, pending: [...waiting.values()] };
  } finally {
    abort.abort();
  }
}
