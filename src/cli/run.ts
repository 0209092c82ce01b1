/**
 * `torus run [placement options] -- CMD ARGS…` (issue 14, as torchrun / mpirun --tag-output): places CMD as an
 * exec job, streams every rank's stdout and stderr to the terminal as written, each line prefixed
 * `[rank N node]`, stops the job on every node at Ctrl-C, and exits with the job's exit code.
 */
import type { InstanceView } from '../api/node-facade.js';
import { parseBytes } from './table.js';
import { parseCli, processIo, runCli, UsageError, type ApiClient, type CliIo } from './api-client.js';

export const RUN_USAGE = `usage: torus run [options] -- CMD [ARGS...]
  Places CMD as an exec job (one rank per node), streams every rank's output prefixed [rank N node],
  stops the job on every node at Ctrl-C, and exits with the job's exit code.
  --min-nodes N        at least N ranks (default 1)
  --nodes ID,ID        nodes that must take part
  --memory SIZE        memory the whole job needs (default 1MiB)
  --workload NAME      workload id (default: the command's name)
  --instance-id ID     choose the instance id
  --restart POLICY     never (default) or on-failure[:MAX] (restart the whole group)
  --api URL            the node's API (default http://127.0.0.1:52515, or TORUS_API)
  --token T            API token (default TORUS_TOKEN, then <data dir>/api-token)
  --data-dir DIR       where to find api-token (default TORUS_DATA_DIR, then ~/.torus)
`;

const OPTIONS = {
  'min-nodes': { type: 'string' }, nodes: { type: 'string' }, memory: { type: 'string' }, workload: { type: 'string' },
  'instance-id': { type: 'string' }, restart: { type: 'string' },
} as const;

function restartOf(text: unknown): { policy: 'never' | 'on-failure'; max?: number } | undefined {
  if (text === undefined) return undefined;
  const m = typeof text === 'string' ? /^(never|on-failure)(?::(\d{1,3}))?$/.exec(text) : null;
  if (!m) throw new UsageError(`--restart: expected never or on-failure[:MAX], got ${String(text)}`);
  return { policy: m[1] as 'never' | 'on-failure', ...(m[2] !== undefined ? { max: Number(m[2]) } : {}) };
}

export async function runRunCommand(args: string[], io: CliIo = processIo, signals: NodeJS.EventEmitter = process): Promise<number> {
  const dash = args.indexOf('--');
  const own = dash >= 0 ? args.slice(0, dash) : args;
  const command = dash >= 0 ? args.slice(dash + 1) : [];
  return runCli(io, RUN_USAGE, own, false, async () => {
    const { values, client } = parseCli(own, OPTIONS);
    if (command.length === 0) throw new UsageError('give the command after --, e.g. torus run --min-nodes 3 -- python3 train.py');
    const memoryBytes = values.memory === undefined ? 1 << 20 : parseBytes(String(values.memory));
    if (memoryBytes === undefined) throw new UsageError(`--memory: expected a size like 12GiB, got ${String(values.memory)}`);
    const minNodes = values['min-nodes'] === undefined ? 1 : Number(values['min-nodes']);
    if (!Number.isInteger(minNodes) || minNodes < 1) throw new UsageError('--min-nodes: expected a whole number ≥ 1');
    const restart = restartOf(values.restart);
    const [file, ...rest] = command as [string, ...string[]];
    const request = {
      workload: { id: typeof values.workload === 'string' ? values.workload : file.split('/').pop()!.replace(/[^A-Za-z0-9._-]/g, '_') || 'job',
        kind: 'exec', command: file, args: rest, memoryBytes, layers: Math.max(minNodes, 1), ...(restart ? { restart } : {}) },
      minNodes,
      ...(typeof values.nodes === 'string' ? { requiredNodes: values.nodes.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
      ...(typeof values['instance-id'] === 'string' ? { instanceId: values['instance-id'] } : {}),
    };
    const token = client.token.token;
    const instance = await client.request<InstanceView>('POST', '/v1/instances', request);
    return follow(client, token, instance, io, signals);
  });
}

interface JobView extends InstanceView { readonly exitCode?: number; readonly job?: { state: string; exitCode?: number; signal?: string } }

async function follow(client: ApiClient, token: string | undefined, instance: InstanceView, io: CliIo, signals: NodeJS.EventEmitter): Promise<number> {
  const id = encodeURIComponent(instance.id);
  const names = await client.get<{ nodes: { id: string; name?: string }[] }>('/v1/topology').then((t) => new Map(t.nodes.map((n) => [n.id, n.name ?? n.id])), () => new Map<string, string>());
  io.stderr.write(`torus: job ${instance.id} on ${instance.nodes.map((n) => names.get(n) ?? n).join(', ')}\n`);
  const abort = new AbortController();
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const streams = instance.nodes.flatMap((node, rank) => (['stdout', 'stderr'] as const).map((stream) =>
    pipeLog(client.url(`/v1/instances/${id}/logs?rank=${rank}&stream=${stream}&follow=1`), headers, `[rank ${rank} ${names.get(node) ?? node}] `,
      stream === 'stdout' ? io.stdout : io.stderr, abort.signal)));
  let interrupted = false;
  const onSigint = (): void => {
    if (interrupted) return;
    interrupted = true;
    io.stderr.write(`torus: stopping job ${instance.id} on every node\n`);
    void client.request('DELETE', `/v1/instances/${id}`).catch((error: unknown) => io.stderr.write(`torus: ${(error as Error).message}\n`));
  };
  signals.on('SIGINT', onSigint);
  try {
    for (;;) {
      const v = await client.get<JobView>(`/v1/instances/${id}`).catch((error: { code?: string }) => {
        if (error.code === 'TORUS_INSTANCE_UNKNOWN' || error.code === 'TORUS_API_NOT_FOUND') return null; // deleted (Ctrl-C)
        throw error;
      });
      const state = v?.job?.state;
      if (!v || state === 'completed' || state === 'failed') {
        // The logs end by themselves once the job is over; give the last lines a moment.
        await Promise.race([Promise.allSettled(streams), new Promise((r) => setTimeout(r, 5000))]);
        if (!v) return 130;
        if (state === 'failed') io.stderr.write(`torus: job ${instance.id} failed: ${String(v.reason ?? '')}\n`);
        return state === 'completed' ? 0 : typeof v.job?.exitCode === 'number' && v.job.exitCode !== 0 ? v.job.exitCode : 1;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    signals.off('SIGINT', onSigint);
    abort.abort();
  }
}

/** Streams one rank's log, writing each complete line with the prefix (a partial last line at the end). */
async function pipeLog(url: string, headers: Record<string, string>, prefix: string, out: CliIo['stdout'], signal: AbortSignal): Promise<void> {
  let rest = '';
  const decoder = new TextDecoder();
  try {
    const res = await fetch(url, { headers, signal });
    if (!res.ok || !res.body) return;
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const lines = (rest + decoder.decode(value, { stream: true })).split('\n');
      rest = lines.pop() ?? '';
      if (lines.length) out.write(lines.map((l) => `${prefix}${l}\n`).join(''));
    }
  } catch {
    // aborted or the node went away: what was written so far stays
  }
  if (rest) out.write(`${prefix}${rest}\n`);
}
