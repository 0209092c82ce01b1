/** `torus place`: places a workload on the cluster and starts its runners (or, with --preview, shows every option). */
import { readFile } from 'node:fs/promises';
import type { InstanceView } from '../api/node-facade.js';
import { UsageError, parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';
import { renderInstances } from './instances.js';
import { parseBytes } from './table.js';

export const PLACE_USAGE = `usage: torus place (--request REQUEST.json | --workload ID --memory SIZE --layers N [options] | --model ID [options]) [--preview] [--api URL] [--token T | --data-dir DIR] [--json]
  Places the workload (the leader plans it) and starts its runners; prints the instance, or the planner's reason.
  --request FILE        the request as JSON (the \`plan\` command's format, plus workload.kind/command for exec)
  --workload ID         workload id            --memory SIZE   e.g. 12GiB, 512MiB or bytes
  --layers N            layer count            --hidden-size N, --kv-heads N, --supports-tensor
  --model ID            a model artifact (torus artifacts add DIR): its record gives the sizes and each
                        stage's real bytes; --memory, --layers, ... then optional (must agree with it);
                        --workload defaults to model-<first 12 digits of ID>
  --sharding pipeline|tensor (default pipeline)   --backend ring|jaccl (default ring)
  --min-nodes N         smallest node count    --required-nodes A,B   nodes that must be included
  --nodes A,B,C         pin the placement: exactly these nodes, rank 0 first (the planner checks the set, splits
                        the layers and predicts it, or says why it does not fit; never moved to other nodes)
  --framework NAME      the framework the workload runs (e.g. torch): nodes calibrated for it (torus calibrate)
                        are predicted with those figures; the prediction's \`figures\` says which each node used
  --tokens N            tokens per step (prefill: N; decode: 1)   --context N   positions already in the KV cache
  --exec CMD            run CMD on every node (kind exec) with --arg=X (repeatable) as its arguments
  --instance-id ID      choose the instance id
  --preview             show every option (plans and refusals) instead of placing
`;

const OPTIONS = {
  request: { type: 'string' },
  workload: { type: 'string' },
  model: { type: 'string' },
  memory: { type: 'string' },
  layers: { type: 'string' },
  'hidden-size': { type: 'string' },
  'kv-heads': { type: 'string' },
  'supports-tensor': { type: 'boolean' },
  framework: { type: 'string' },
  tokens: { type: 'string' },
  context: { type: 'string' },
  sharding: { type: 'string' },
  backend: { type: 'string' },
  'min-nodes': { type: 'string' },
  nodes: { type: 'string' },
  'required-nodes': { type: 'string' },
  exec: { type: 'string' },
  arg: { type: 'string', multiple: true },
  'instance-id': { type: 'string' },
  preview: { type: 'boolean' },
} as const;

export async function runPlaceCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, PLACE_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, OPTIONS);
    const request = await buildRequest(values as Record<string, unknown>);
    if (values.preview) {
      const { workload } = request as { workload: Record<string, unknown> };
      const { kind: _k, command: _c, args: _a, ...planWorkload } = workload;
      const { instanceId: _i, ...rest } = request as Record<string, unknown>;
      const previews = await client.request<unknown>('POST', '/v1/placements/preview', {
        ...rest,
        workload: planWorkload,
      });
      printJson(io, previews);
      return 0;
    }
    const instance = await client.request<InstanceView>('POST', '/v1/instances', request);
    if (values.json) printJson(io, instance);
    else
      io.stdout.write(`placed ${instance.id} on ${instance.nodes.join(' → ')}\n${renderInstances([instance], true)}`);
    return 0;
  });
}

async function buildRequest(v: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (typeof v.request === 'string') {
    const others = Object.keys(OPTIONS).filter((k) => k !== 'request' && k !== 'preview' && v[k] !== undefined);
    if (others.length) throw new UsageError(`--request cannot be combined with --${others[0]}`);
    try {
      return JSON.parse(await readFile(v.request, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`--request ${v.request}: ${(error as Error).message}`);
    }
  }
  const need = (flag: string): string => {
    const value = v[flag];
    if (typeof value !== 'string') throw new UsageError(`missing --${flag} (or give --request FILE)`);
    return value;
  };
  const int = (flag: string): number | undefined => {
    const value = v[flag];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d+$/.test(value))
      throw new UsageError(`--${flag}: expected a whole number, got ${String(value)}`);
    return Number(value);
  };
  const model = typeof v.model === 'string' ? v.model : undefined;
  // With a model, its record gives the sizes: the flags are optional (the node refuses any that contradicts it).
  const memory = model && v.memory === undefined ? undefined : need('memory');
  const memoryBytes = memory === undefined ? undefined : parseBytes(memory);
  if (memory !== undefined && memoryBytes === undefined)
    throw new UsageError(`--memory: expected a size like 12GiB, got ${String(v.memory)}`);
  const exec = typeof v.exec === 'string' ? v.exec : undefined;
  if (!exec && v.arg !== undefined) throw new UsageError('--arg needs --exec');
  const workload = {
    id: model && v.workload === undefined ? `model-${model.slice(0, 12)}` : need('workload'),
    model,
    memoryBytes,
    layers: int('layers') ?? (model ? undefined : need('layers')),
    hiddenSize: int('hidden-size'),
    kvHeads: int('kv-heads'),
    supportsTensor: v['supports-tensor'] === true ? true : undefined,
    framework: typeof v.framework === 'string' ? v.framework : undefined,
    tokensPerStep: int('tokens'),
    contextTokens: int('context'),
    kind: exec ? 'exec' : 'ring',
    command: exec,
    args: exec ? (v.arg as string[] | undefined) : undefined,
  };
  const nodes = nodeList(v.nodes);
  if (nodes && (v['min-nodes'] !== undefined || v['required-nodes'] !== undefined))
    throw new UsageError('--nodes pins the whole set: not with --min-nodes or --required-nodes');
  return {
    workload,
    sharding: v.sharding ?? 'pipeline',
    backend: v.backend ?? 'ring',
    minNodes: int('min-nodes'),
    requiredNodes: nodeList(v['required-nodes']),
    nodes,
    instanceId: v['instance-id'],
  };
}

/** `A, B,C` → ['A', 'B', 'C'] in the order given (the ring order, for --nodes). */
export function nodeList(text: unknown): string[] | undefined {
  if (typeof text !== 'string') return undefined;
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
