/**
 * The placement, as environment variables, for an `exec` runner (so MLX and torch.distributed jobs need no
 * hand-written host list) and the MLX ring hostfile entries of one rank. Pure: the caller writes the file.
 */
import { type RunnerInstance, shardOf } from '../../../protocols/runner-instance.js';
import { LISTEN_ALL_IP, PLACEHOLDER_IP } from '../../../protocols/hostfile.js';

export interface ExecEnvOptions {
  /** Where the caller writes `ringHosts(instance, node)` as JSON (MLX ring hostfile). */
  readonly hostfilePath: string;
  /** The interface holding a local address (this node's profile / OS); unset: no *_SOCKET_IFNAME variables. */
  readonly ifaceOf?: (ip: string) => string | undefined;
  /** Group restarts so far (torchrun's TORCHELASTIC_RESTART_COUNT) and the most allowed. */
  readonly restartCount?: number;
  readonly maxRestarts?: number;
}

/**
 * The MLX ring hostfile entries for `nodeId`: one "ip:port" per rank. Uses the plan's hostsByNode; a plan
 * without it (jaccl) gets the same shape built from the plan's port (self listens, others placeholders).
 */
export function ringHosts(instance: RunnerInstance, nodeId: string): string[] {
  const planned = instance.hostsByNode?.[nodeId];
  if (planned) return planned.map((h) => (h.ip.includes(':') ? `[${h.ip}]:${h.port}` : `${h.ip}:${h.port}`));
  const shard = requireShard(instance, nodeId);
  return Array.from({ length: shard.worldSize }, (_, r) =>
    r === shard.rank ? `${LISTEN_ALL_IP}:${instance.port}` : `${PLACEHOLDER_IP}:0`,
  );
}

function requireShard(instance: RunnerInstance, nodeId: string) {
  const shard = shardOf(instance, nodeId);
  if (!shard) throw new Error(`node ${nodeId} has no shard in instance ${instance.id}`);
  return shard;
}

function splitHostPort(text: string): { ip: string; port: number } | undefined {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(text);
  return m && m[1] !== undefined && m[2] !== undefined ? { ip: m[1], port: Number(m[2]) } : undefined;
}

const usable = (ip: string | undefined): ip is string =>
  ip !== undefined && ip !== PLACEHOLDER_IP && ip !== LISTEN_ALL_IP;

/**
 * The address the other ranks reach `nodeId` at (its planned address): a ring neighbour's hostfile entry for it
 * (right neighbour first), else any other node's; for rank 0 of a jaccl plan, the others' coordinator entry.
 * Undefined for a single-node instance (nobody reaches it).
 */
export function plannedAddressOf(instance: RunnerInstance, nodeId: string): string | undefined {
  const shard = requireShard(instance, nodeId);
  const n = instance.nodes.length;
  const order = [1, n - 1, ...Array.from({ length: n }, (_, i) => i)].map((d) => instance.nodes[(shard.rank + d) % n]!);
  for (const other of order) {
    if (other === nodeId) continue;
    const ip = instance.hostsByNode?.[other]?.[shard.rank]?.ip;
    if (usable(ip)) return ip;
    if (shard.rank === 0) {
      const coord = instance.jacclCoordinators?.[other];
      const parsed = coord ? splitHostPort(coord) : undefined;
      if (parsed && usable(parsed.ip)) return parsed.ip;
    }
  }
  return undefined;
}

/**
 * The plan's mesh address of `nodeId`: one every other placed node reaches (torch's Gloo/NCCL connect every
 * pair of ranks, not only ring neighbours). Undefined in plans from before it, or when no address is common.
 */
export function meshAddressOf(instance: RunnerInstance, nodeId: string): string | undefined {
  const ip = instance.meshAddresses?.[nodeId];
  return usable(ip) ? ip : undefined;
}

/**
 * Rank 0's address as seen from `nodeId`, for torch's MASTER_ADDR and MLX_JACCL_COORDINATOR. In order:
 * rank 0's mesh address (the same on every rank, reached by all); the plan's jaccl coordinator entry for this node; this node's own ring entry for rank 0 (rank 0 is a
 * neighbour); any other node's ring entry for rank 0 (its neighbours reach it there, and on a LAN so can we).
 * Rank 0 itself uses its planned address too (the one the others dial: a script that picks its interface from
 * MASTER_ADDR must not pick loopback); only a single-node instance uses loopback.
 */
export function coordinatorFor(instance: RunnerInstance, nodeId: string): { addr: string; port: number } {
  const shard = requireShard(instance, nodeId);
  const coord = instance.jacclCoordinators?.[nodeId];
  const parsed = coord ? splitHostPort(coord) : undefined;
  const port = parsed?.port ?? (instance.port < 65535 ? instance.port + 1 : instance.port - 1);
  const mesh = meshAddressOf(instance, instance.nodes[0] as string);
  if (mesh !== undefined) return { addr: mesh, port };
  if (shard.rank === 0) return { addr: plannedAddressOf(instance, nodeId) ?? '127.0.0.1', port };
  if (parsed && usable(parsed.ip)) return { addr: parsed.ip, port };
  const own = instance.hostsByNode?.[nodeId]?.[0]?.ip;
  if (usable(own)) return { addr: own, port };
  for (const node of instance.nodes) {
    const ip = instance.hostsByNode?.[node]?.[0]?.ip;
    if (usable(ip)) return { addr: ip, port };
  }
  throw new Error(`no address of rank 0 is known for instance ${instance.id}`);
}

/**
 * The environment of an `exec` runner on `nodeId`. MASTER_PORT is the jaccl coordinator's port when the
 * plan has one, else the ring port + 1, so an MLX ring (on the ring port) and a torch store never collide.
 */
export function execEnv(instance: RunnerInstance, nodeId: string, options: ExecEnvOptions): Record<string, string> {
  const shard = requireShard(instance, nodeId);
  const coordinator = coordinatorFor(instance, nodeId);
  const jaccl =
    instance.jacclCoordinators?.[nodeId] ??
    (shard.rank === 0 ? `${LISTEN_ALL_IP}:${coordinator.port}` : `${coordinator.addr}:${coordinator.port}`);
  const env: Record<string, string> = {
    TORUS_INSTANCE_ID: instance.id,
    TORUS_NODE_ID: nodeId,
    TORUS_RANK: String(shard.rank),
    TORUS_WORLD_SIZE: String(shard.worldSize),
    TORUS_HOSTFILE: options.hostfilePath,
    TORUS_LAYER_START: String(shard.startLayer),
    TORUS_LAYER_END: String(shard.endLayer),
    MLX_RANK: String(shard.rank),
    MLX_HOSTFILE: options.hostfilePath,
    MLX_JACCL_COORDINATOR: jaccl,
    MASTER_ADDR: coordinator.addr,
    MASTER_PORT: String(coordinator.port),
    RANK: String(shard.rank),
    WORLD_SIZE: String(shard.worldSize),
    // torchrun's contract, one process per node: https://pytorch.org/docs/stable/elastic/run.html
    LOCAL_RANK: '0',
    LOCAL_WORLD_SIZE: '1',
    GROUP_RANK: String(shard.rank),
    GROUP_WORLD_SIZE: String(shard.worldSize),
    ROLE_NAME: 'default',
    ROLE_RANK: String(shard.rank),
    ROLE_WORLD_SIZE: String(shard.worldSize),
    TORCHELASTIC_RUN_ID: `torus-${instance.id}`,
    TORCHELASTIC_RESTART_COUNT: String(options.restartCount ?? 0),
    TORCHELASTIC_MAX_RESTARTS: String(options.maxRestarts ?? 0),
  };
  // Gloo, NCCL and TensorPipe bind where the host name resolves (often loopback) unless told the interface; Gloo
  // dials every other rank through it, so it must hold the address all of them reach (the mesh address).
  const own = meshAddressOf(instance, nodeId) ?? plannedAddressOf(instance, nodeId);
  const iface = own !== undefined ? options.ifaceOf?.(own) : undefined;
  if (iface) env.GLOO_SOCKET_IFNAME = env.NCCL_SOCKET_IFNAME = env.TP_SOCKET_IFNAME = iface;
  if (instance.jacclDevices) env.MLX_IBV_DEVICES = JSON.stringify(instance.jacclDevices);
  return env;
}
