/**
 * The placement, as environment variables, for an `exec` runner (so MLX and torch.distributed jobs need no
 * hand-written host list) and the MLX ring hostfile entries of one rank. Pure: the caller writes the file.
 */
import { type RunnerInstance, shardOf } from './instance.js';

export const PLACEHOLDER_IP = '198.51.100.1';
export const LISTEN_ALL_IP = '0.0.0.0';

export interface ExecEnvOptions {
  /** Where the caller writes `ringHosts(instance, node)` as JSON (MLX ring hostfile). */
  readonly hostfilePath: string;
}

/**
 * The MLX ring hostfile entries for `nodeId`: one "ip:port" per rank. Uses the plan's hostsByNode; a plan
 * without it (jaccl) gets the same shape built from the plan's port (self listens, others placeholders).
 */
export function ringHosts(instance: RunnerInstance, nodeId: string): string[] {
  const planned = instance.hostsByNode?.[nodeId];
  if (planned) return planned.map((h) => (h.ip.includes(':') ? `[${h.ip}]:${h.port}` : `${h.ip}:${h.port}`));
  const shard = requireShard(instance, nodeId);
  return Array.from({ length: shard.worldSize }, (_, r) => (r === shard.rank ? `${LISTEN_ALL_IP}:${instance.port}` : `${PLACEHOLDER_IP}:0`));
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

const usable = (ip: string | undefined): ip is string => ip !== undefined && ip !== PLACEHOLDER_IP && ip !== LISTEN_ALL_IP;

/**
 * Rank 0's address as seen from `nodeId`, for torch's MASTER_ADDR and MLX_JACCL_COORDINATOR. In order:
 * the plan's jaccl coordinator entry for this node; this node's own ring entry for rank 0 (rank 0 is a
 * neighbour); any other node's ring entry for rank 0 (its neighbours reach it there, and on a LAN so can we).
 * Rank 0 itself uses loopback to reach its own store.
 */
export function coordinatorFor(instance: RunnerInstance, nodeId: string): { addr: string; port: number } {
  const shard = requireShard(instance, nodeId);
  const coord = instance.jacclCoordinators?.[nodeId];
  const parsed = coord ? splitHostPort(coord) : undefined;
  const port = parsed?.port ?? (instance.port < 65535 ? instance.port + 1 : instance.port - 1);
  if (shard.rank === 0) return { addr: '127.0.0.1', port };
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
  const jaccl = instance.jacclCoordinators?.[nodeId] ?? (shard.rank === 0 ? `${LISTEN_ALL_IP}:${coordinator.port}` : `${coordinator.addr}:${coordinator.port}`);
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
  };
  if (instance.jacclDevices) env.MLX_IBV_DEVICES = JSON.stringify(instance.jacclDevices);
  return env;
}
