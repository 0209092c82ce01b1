/**
 * `torus run [placement options] -- CMD ARGS…` (as torchrun / mpirun --tag-output): places CMD as an
 * exec job, streams every rank's stdout and stderr to the terminal as written, each line prefixed
 * `[rank N node]`, stops the job on every node at Ctrl-C, and exits with the job's exit code.
 */
import { constants } from 'node:os';
import type { InstanceView } from '../api/node-facade.js';
import { RankLogs } from './rank-logs.js';
import { nodeList } from './place.js';
import { parseBytes } from './table.js';
import { parseCli, processIo, runCli, UsageError, type ApiClient, type CliIo } from './api-client.js';

export const RUN_USAGE = `usage: torus run [options] -- CMD [ARGS...]
  Places CMD as an exec job (one rank per node), streams every rank's output prefixed [rank N node],
  stops the job on every node at Ctrl-C, and exits with the job's exit code.
  --min-nodes N        at least N ranks (default 1)
  --required-nodes ID,ID  nodes that must take part (the planner picks the rest)
  --nodes ID,ID,...    pin the job: exactly these nodes, rank 0 first (refused with the planner's reason when
                       they cannot hold it; if one leaves, the job fails rather than move to other nodes)
  --memory SIZE        memory the whole job needs (default 1MiB; with --model the model's weights)
  --layers N           layers the plan splits over the ranks (TORUS_LAYER_START/END; default one per rank,
                       with --model the model's)
  --model ID           a model artifact (torus artifacts add DIR): placed as a pipeline by its layers' real
                       bytes; the ranks get it in their workload (docs/placement.md, "A model workload")
  --workload NAME      workload id (default: the command's name)
  --framework NAME     the framework the job runs (e.g. torch): nodes calibrated for it (torus calibrate) are
                       predicted with those figures
  --instance-id ID     choose the instance id
  --restart POLICY     never (default) or on-failure[:MAX] (restart the whole group)
  --api URL            the node's API (default http://127.0.0.1:52515, or TORUS_API)
  --token T            API token (default TORUS_TOKEN, then <data dir>/api-token)
  --data-dir DIR       where to find api-token (default TORUS_DATA_DIR, then ~/.torus)
`;

/** After the job ends, how long a rank's log stream may send nothing before run stops waiting for its last lines. */
const LOG_IDLE_MS = 5000;

const OPTIONS = {
  'min-nodes': { type: 'string' },
  nodes: { type: 'string' },
  'required-nodes': { type: 'string' },
  memory: { type: 'string' },
  layers: { type: 'string' },
  model: { type: 'string' },
  workload: { type: 'string' },
  framework: { type: 'string' },
  'instance-id': { type: 'string' },
  restart: { type: 'string' },
} as const;

function restartOf(text: unknown): { policy: 'never' | 'on-failure'; max?: number } | undefined {
  if (text === undefined) return undefined;
  const m = typeof text === 'string' ? /^(never|on-failure)(?::(\d{1,3}))?$/.exec(text) : null;
  if (!m) throw new UsageError(`--restart: expected never or on-failure[:MAX], got ${String(text)}`);
  return { policy: m[1] as 'never' | 'on-failure', ...(m[2] !== undefined ? { max: Number(m[2]) } : {}) };
}

export async function runRunCommand(
  args: string[],
  io: CliIo = processIo,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const dash = args.indexOf('--');
  const own = dash >= 0 ? args.slice(0, dash) : args;
  const command = dash >= 0 ? args.slice(dash + 1) : [];
  // Ctrl-C is ours from the start: one pressed while the job is being placed still stops it once it exists.
  const interrupt = new Interrupt(signals);
  try {
    return await runCli(io, RUN_USAGE, own, false, async () => {
      const { values, client } = parseCli(own, OPTIONS);
      if (command.length === 0)
        throw new UsageError('give the command after --, e.g. torus run --min-nodes 3 -- python3 train.py');
      const model = typeof values.model === 'string' ? values.model : undefined;
      const memoryBytes =
        values.memory === undefined ? (model ? undefined : 1 << 20) : parseBytes(String(values.memory));
      if (memoryBytes === undefined && values.memory !== undefined)
        throw new UsageError(`--memory: expected a size like 12GiB, got ${String(values.memory)}`);
      const minNodes = values['min-nodes'] === undefined ? 1 : Number(values['min-nodes']);
      if (!Number.isInteger(minNodes) || minNodes < 1) throw new UsageError('--min-nodes: expected a whole number ≥ 1');
      const restart = restartOf(values.restart);
      const nodes = nodeList(values.nodes);
      if (nodes && (values['min-nodes'] !== undefined || values['required-nodes'] !== undefined))
        throw new UsageError('--nodes pins the whole set: not with --min-nodes or --required-nodes');
      // one layer per rank at least: a pipeline gives every node one
      const ranks = nodes?.length ?? minNodes;
      const layers = values.layers === undefined ? ranks : Number(values.layers);
      if (!Number.isInteger(layers) || layers < ranks)
        throw new UsageError(
          `--layers: expected a whole number ≥ ${nodes ? 'the pinned nodes' : '--min-nodes'} (${ranks}), got ${String(values.layers)}`,
        );
      const requiredNodes = nodeList(values['required-nodes']);
      const [file, ...rest] = command as [string, ...string[]];
      const request = {
        workload: {
          id:
            typeof values.workload === 'string'
              ? values.workload
              : file
                  .split('/')
                  .pop()!
                  .replace(/[^A-Za-z0-9._-]/g, '_') || 'job',
          kind: 'exec',
          command: file,
          args: rest,
          // A model's record gives its sizes (the node fills them in, and refuses a --layers that contradicts it).
          ...(model ? { model } : {}),
          ...(model && values.layers === undefined ? {} : { layers }),
          ...(memoryBytes !== undefined ? { memoryBytes } : {}),
          ...(restart ? { restart } : {}),
          ...(typeof values.framework === 'string' ? { framework: values.framework } : {}),
        },
        ...(nodes ? { nodes } : { minNodes }),
        ...(requiredNodes ? { requiredNodes } : {}),
        ...(typeof values['instance-id'] === 'string' ? { instanceId: values['instance-id'] } : {}),
      };
      io.stderr.write(
        `torus: placing ${file} on ${nodes ? `${nodes.join(', ')} (pinned)` : minNodes === 1 ? 'at least 1 node' : `at least ${minNodes} nodes`}\n`,
      );
      const instance = await client.request<InstanceView>('POST', '/v1/instances', request);
      return await follow(client, instance, io, interrupt);
    });
  } finally {
    interrupt.dispose();
  }
}

/** An exec instance's view; its `job` says running | restarting | completed | failed (src/api/views.ts). */
type JobView = InstanceView;

/** SIGINT as `run` sees it: the first asks to stop the job, the second to stop waiting for that. */
class Interrupt {
  count = 0;
  readonly #signals: NodeJS.EventEmitter;
  readonly #waiters = new Set<() => void>();
  readonly #onSigint = (): void => {
    this.count += 1;
    for (const wake of this.#waiters) wake();
  };

  constructor(signals: NodeJS.EventEmitter) {
    this.#signals = signals;
    signals.on('SIGINT', this.#onSigint);
  }

  /** Resolves after `ms` or at the next SIGINT, whichever is first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
    });
  }

  dispose(): void {
    // On the real process the handler stays until it exits: a Ctrl-C that lands as run returns must not kill it
    // with a signal instead of the exit code run chose.
    if (this.#signals !== process) this.#signals.off('SIGINT', this.#onSigint);
    for (const wake of this.#waiters) wake();
  }
}

/** The job's exit code as a shell reports it: the failing rank's code, 128 + N for a rank killed by signal N. */
export function jobExitCode(v: JobView): number {
  if (v.job?.state === 'completed') return 0;
  const code = v.job?.exitCode;
  if (typeof code === 'number' && code !== 0) return code;
  const signal = v.job?.signal;
  const number =
    signal && Object.hasOwn(constants.signals, signal)
      ? constants.signals[signal as keyof typeof constants.signals]
      : undefined;
  return number !== undefined ? 128 + number : 1;
}

async function follow(client: ApiClient, instance: InstanceView, io: CliIo, interrupt: Interrupt): Promise<number> {
  const id = encodeURIComponent(instance.id);
  const names = await client.get<{ nodes: { id: string; name?: string }[] }>('/v1/topology').then(
    (t) => new Map(t.nodes.map((n) => [n.id, n.name ?? n.id])),
    () => new Map<string, string>(),
  );
  const nameOf = (node: string): string => names.get(node) ?? node;
  io.stderr.write(`torus: job ${instance.id} on ${instance.nodes.map(nameOf).join(', ')}\n`);
  const logs = new RankLogs({
    urlFor: (query) => client.url(`/v1/instances/${id}/logs?${query}`),
    headers: client.authHeaders,
    agent: client.agent,
    io,
    nameOf,
  });
  logs.follow(instance.nodes);
  let deleting: Promise<unknown> | undefined;
  let generation = typeof instance.generation === 'number' ? instance.generation : 1;
  let restartingSaid = false;
  try {
    for (;;) {
      if (interrupt.count >= 1 && !deleting) {
        io.stderr.write(`torus: stopping job ${instance.id} on every node\n`);
        deleting = client
          .request('DELETE', `/v1/instances/${id}`)
          .catch((error: { code?: string; message?: string }) => {
            if (error.code !== 'TORUS_INSTANCE_UNKNOWN') io.stderr.write(`torus: ${String(error.message)}\n`);
          });
      }
      if (interrupt.count >= 2) {
        // Stop waiting for the ranks to end; the process still lives until the node has answered the delete.
        io.stderr.write(`torus: second Ctrl-C, not waiting for the ranks to end\n`);
        return 130;
      }
      const v = await client.get<JobView>(`/v1/instances/${id}`).catch((error: { code?: string }) => {
        if (error.code === 'TORUS_INSTANCE_UNKNOWN' || error.code === 'TORUS_API_NOT_FOUND') return null; // deleted (Ctrl-C, or by someone else)
        throw error;
      });
      const state = v?.job?.state;
      if (!v || state === 'completed' || state === 'failed') {
        // The logs end by themselves once the ranks are done; wait for the last lines while they keep coming.
        for (const open of await logs.drained(LOG_IDLE_MS))
          io.stderr.write(
            `torus: rank ${open.rank ?? '?'}'s ${open.stream} on ${open.node} sent nothing for ${LOG_IDLE_MS / 1000} s after the job ended; its output above may lack its last lines (GET /v1/instances/${id}/logs?rank=${open.rank ?? 0}&stream=${open.stream})\n`,
          );
        if (!v) {
          if (deleting) return 130; // stopped at Ctrl-C: exit as a shell reports a command ended by SIGINT
          io.stderr.write(`torus: job ${instance.id} was deleted before it finished\n`);
          return 1;
        }
        if (state === 'failed') io.stderr.write(`torus: job ${instance.id} failed: ${String(v.reason ?? '')}\n`);
        return jobExitCode(v);
      }
      if (state === 'restarting' && !restartingSaid) {
        restartingSaid = true;
        io.stderr.write(`torus: job ${instance.id} failed (${String(v.reason ?? '')}); restarting the group\n`);
      }
      if (typeof v.generation === 'number' && v.generation !== generation && state === 'running') {
        generation = v.generation;
        restartingSaid = false;
        io.stderr.write(`torus: job ${instance.id} restarted (${String(v.reason ?? '')})\n`);
        logs.follow(v.nodes);
      }
      await interrupt.sleep(500);
    }
  } finally {
    logs.close();
  }
}
