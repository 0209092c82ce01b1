/**
 * Client side of `torus bench ring --live`: starts a ring benchmark on the live cluster through the node's API
 * (POST /v1/bench/ring), shows progress from the `bench` notices of /v1/events, and prints the result table.
 * The lab mode of `bench ring` (namespaces, iperf3) belongs to src/cli/bench-ring.ts.
 */
import type { BenchRun } from '../api/routes/bench-routes.js';
import { UsageError, parseCli, printJson, processIo, runCli, type ApiClient, type CliIo } from './api-client.js';
import type { GlooResult } from '../bench/ring/gloo.js';
import { renderSideBySide, type GlooComparisonRow } from './bench-gloo-live.js';
import { readSse } from './sse-client.js';
import { parseBytes, renderTable } from './table.js';

export const BENCH_RING_LIVE_USAGE = `usage: torus bench ring --live [--nodes A,B,...] [-b SIZE] [-e SIZE] [-f N] [-n N] [-w N] [--ops LIST] [--dtype T] [--bidir] [--gloo [--gloo-python PATH]] [--api URL] [--token T | --data-dir DIR] [--json]
  Runs the ring benchmark on the running cluster (default: every node), with progress, then prints the table.
  --gloo: the node then runs torch Gloo's all_reduce on the same nodes as a torus job (every node needs --allow-exec
  for the interpreter, else the request is refused; and python3-torch; --gloo-python, an absolute path, default
  /usr/bin/python3) and it is printed beside the ring with the ratio.
  -b/--min-bytes, -e/--max-bytes, -f/--step-factor, -n/--iters, -w/--warmup as in nccl-tests
  --ops all-reduce,all-gather,broadcast,send-recv   --dtype float32|float16|int32   --bidir both directions
`;

const OPTIONS = {
  live: { type: 'boolean' },
  nodes: { type: 'string' },
  'min-bytes': { type: 'string', short: 'b' },
  'max-bytes': { type: 'string', short: 'e' },
  'step-factor': { type: 'string', short: 'f' },
  iters: { type: 'string', short: 'n' },
  warmup: { type: 'string', short: 'w' },
  ops: { type: 'string' },
  dtype: { type: 'string' },
  bidir: { type: 'boolean' },
  gloo: { type: 'boolean' },
  'gloo-python': { type: 'string' },
} as const;

export async function runBenchRingLiveCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, BENCH_RING_LIVE_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, OPTIONS);
    const v = values as Record<string, unknown>;
    const size = (flag: string): number | undefined => {
      if (v[flag] === undefined) return undefined;
      const n = parseBytes(String(v[flag]));
      if (n === undefined) throw new UsageError(`--${flag}: expected a size like 8, 1M or 256MiB`);
      return n;
    };
    const int = (flag: string): number | undefined => {
      if (v[flag] === undefined) return undefined;
      if (!/^\d+$/.test(String(v[flag]))) throw new UsageError(`--${flag}: expected a whole number`);
      return Number(v[flag]);
    };
    const list = (flag: string): string[] | undefined =>
      typeof v[flag] === 'string'
        ? String(v[flag])
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined;
    const request = {
      nodes: list('nodes'),
      ops: list('ops'),
      dtype: v.dtype,
      minBytes: size('min-bytes'),
      maxBytes: size('max-bytes'),
      stepFactor: int('step-factor'),
      iterations: int('iters'),
      warmup: int('warmup'),
      bidirectional: v.bidir === true ? true : undefined,
      gloo: v.gloo === true ? true : undefined,
      glooPython: typeof v['gloo-python'] === 'string' ? v['gloo-python'] : undefined,
    };
    const run = await watchRun(client, request, (r) => showProgress(io, r));
    if (io.stderr.isTTY) io.stderr.write('\n'); // ends the rewritten progress line
    const result = run.result as { gloo?: GlooResult; vsGloo?: GlooComparisonRow[] } | undefined;
    if (values.json) printJson(io, run);
    else if (run.status === 'done')
      io.stdout.write(
        renderResult(run.result) + (result?.gloo ? renderSideBySide(result.gloo, result.vsGloo ?? []) : ''),
      );
    if (run.status === 'failed') {
      if (!values.json)
        io.stderr.write(`error: ${run.error?.message ?? 'benchmark failed'} (${run.error?.code ?? '?'})\n`);
      return 1;
    }
    return 0;
  });
}

/**
 * Subscribes to the events stream *before* starting (so no notice is missed), starts the run, and follows its
 * notices until it ends. If the stream drops, it falls back to polling GET /v1/bench/ring/:id.
 */
async function watchRun(client: ApiClient, request: object, onProgress: (run: BenchRun) => void): Promise<BenchRun> {
  const { lastIndex } = await client.get<{ lastIndex?: number }>('/v1/topology');
  const abort = new AbortController();
  const early: BenchRun[] = [];
  let id: string | undefined;
  let resolveDone!: (run: BenchRun) => void;
  const done = new Promise<BenchRun>((resolve) => (resolveDone = resolve));
  const onRun = (run: BenchRun): void => {
    if (id === undefined) return void early.push(run);
    if (run.id !== id) return;
    onProgress(run);
    if (run.status !== 'running') resolveDone(run);
  };
  const stream = (async () => {
    for await (const item of readSse(client.url(`/v1/events?after=${lastIndex ?? 0}`), {
      headers: client.authHeaders,
      agent: client.agent,
      signal: abort.signal,
    })) {
      if ('event' in item && item.event === 'bench') onRun(JSON.parse(item.data) as BenchRun);
    }
  })().catch(() => undefined);
  try {
    const started = await client.request<BenchRun>('POST', '/v1/bench/ring', request);
    id = started.id;
    onRun(started);
    for (const run of early.splice(0)) onRun(run);
    // Polling as a safety net: a proxy may buffer or cut the stream.
    const poll = (async () => {
      while (!abort.signal.aborted) {
        await new Promise((r) => setTimeout(r, 2000));
        if (abort.signal.aborted) break;
        const run = await client.get<BenchRun>(`/v1/bench/ring/${started.id}`).catch(() => undefined);
        if (run) onRun(run);
      }
    })();
    const result = await done;
    abort.abort();
    await Promise.all([stream, poll]);
    return result;
  } finally {
    abort.abort();
  }
}

function showProgress(io: CliIo, run: BenchRun): void {
  const p = run.progress;
  const line = `bench ${run.id.slice(0, 8)} ${run.status}${p ? ` ${p.done}/${p.total} ${'#'.repeat(Math.round((20 * p.done) / Math.max(p.total, 1))).padEnd(20, '.')}${p.message ? ` ${p.message}` : ''}` : ''}`;
  // Progress goes to stderr (stdout keeps the table or JSON for pipes), so it is stderr's TTY that decides:
  // a terminal gets one rewritten line, a pipe or log file one plain line per update.
  io.stderr.write(io.stderr.isTTY ? `\r${line}\u001b[K` : `${line}\n`);
}

/** The ring engine's table (rows of nccl-tests columns) when present; otherwise the JSON. */
function renderResult(result: unknown): string {
  const rows = (result as { rows?: unknown } | null)?.rows;
  if (!Array.isArray(rows) || rows.length === 0 || typeof rows[0] !== 'object')
    return `${JSON.stringify(result, null, 2)}\n`;
  const headers = Object.keys(rows[0] as object);
  const body = rows.map((r) => headers.map((h) => String((r as Record<string, unknown>)[h] ?? '')));
  const extra = Object.entries(result as object)
    .filter(([k, val]) => k !== 'rows' && typeof val !== 'object')
    .map(([k, val]) => `${k}: ${String(val)}\n`)
    .join('');
  return renderTable(headers, body) + extra;
}
