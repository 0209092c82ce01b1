/** What an instance runs: the built-in ring collective or an external command (`exec`), with its sizes. */
import { arr, bool, id, int, obj, oneOf, opt, record, str } from '../core/topology/reader.js';
import { compact, optInt, W } from './event-fields.js';

interface WorkloadBase {
  readonly id: string;
  readonly memoryBytes: number;
  readonly layers: number;
  readonly hiddenSize?: number;
  readonly kvHeads?: number;
  readonly supportsTensor?: boolean;
  /** artifact ids (docs/artifacts.md) the workload needs on every node: placement prefers nodes holding them */
  readonly artifacts?: readonly string[];
}
export interface RingWorkload extends WorkloadBase { readonly kind: 'ring' }
/** What happens when a job fails (torchrun's --max-restarts): `never`, or restart the whole group up to `max` times. */
export interface RestartSpec {
  readonly policy: 'never' | 'on-failure';
  readonly max: number;
}
export interface ExecWorkload extends WorkloadBase {
  readonly kind: 'exec';
  readonly restart?: RestartSpec;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}
export type WorkloadSpec = RingWorkload | ExecWorkload;

export function decodeWorkloadSpec(v: unknown, p: string): WorkloadSpec {
  const base = ['id', 'kind', 'memoryBytes', 'layers'];
  const optional = ['hiddenSize', 'kvHeads', 'supportsTensor', 'artifacts'];
  const kind = oneOf(W, obj(W, v, p, ['kind'], [...base, ...optional, 'command', 'args', 'env', 'cwd', 'restart']).kind, `${p}.kind`, ['ring', 'exec'] as const);
  const o = kind === 'ring' ? obj(W, v, p, base, optional) : obj(W, v, p, [...base, 'command'], [...optional, 'args', 'env', 'cwd', 'restart']);
  const common = {
    id: id(W, o.id, `${p}.id`), memoryBytes: int(W, o.memoryBytes, `${p}.memoryBytes`), layers: int(W, o.layers, `${p}.layers`, 1),
    hiddenSize: optInt(o.hiddenSize, `${p}.hiddenSize`, 1), kvHeads: optInt(o.kvHeads, `${p}.kvHeads`, 1),
    supportsTensor: opt(o.supportsTensor, (x) => bool(W, x, `${p}.supportsTensor`)),
    artifacts: opt(o.artifacts, (x) => arr(W, x, `${p}.artifacts`, (y, q) => str(W, y, q, { pattern: /^[0-9a-f]{64}$/ }), 64)),
  };
  if (kind === 'ring') return compact({ kind, ...common });
  return compact({
    kind, ...common, command: str(W, o.command, `${p}.command`, { min: 1 }),
    args: opt(o.args, (x) => arr(W, x, `${p}.args`, (y, q) => str(W, y, q), 1024)),
    env: opt(o.env, (x) => record(W, x, `${p}.env`, (k, q) => str(W, k, q, { pattern: /^[A-Za-z_][A-Za-z0-9_]{0,255}$/ }), (y, q) => str(W, y, q, { max: 65536 }), 1024)),
    cwd: opt(o.cwd, (x) => str(W, x, `${p}.cwd`, { min: 1 })),
    restart: opt(o.restart, (x) => {
      const r = obj(W, x, `${p}.restart`, ['policy'], ['max']);
      const policy = oneOf(W, r.policy, `${p}.restart.policy`, ['never', 'on-failure'] as const);
      return { policy, max: r.max === undefined ? (policy === 'never' ? 0 : 3) : int(W, r.max, `${p}.restart.max`, 0, 100) };
    }),
  });
}
