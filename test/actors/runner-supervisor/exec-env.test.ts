import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localCluster, loopbackInstance, tempDir, waitFor } from './fixtures/helpers.js';

/** Reads a file written by `env` into a map. */
function envOf(path: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

t.test(
  'exec runners see their rank, world size, layers, coordinator and a hostfile with the planned neighbours',
  async (t) => {
    const dir = tempDir(t);
    const nodes = ['a', 'b', 'c'];
    const { managers } = localCluster(t, nodes, dir);
    const out = join(dir, 'out');
    const instance = await loopbackInstance('e3', nodes, {
      kind: 'exec',
      command: [
        'sh',
        '-c',
        `mkdir -p ${out}; cp "$TORUS_HOSTFILE" ${out}/hosts-$TORUS_RANK.json; env > ${out}/env-$TORUS_RANK.tmp; mv ${out}/env-$TORUS_RANK.tmp ${out}/env-$TORUS_RANK`,
      ],
      env: { USER_VAR: 'kept', NCCL_SOCKET_IFNAME: 'chosen-by-the-user' },
    });
    for (const m of managers.values()) m.instanceCreated(instance);
    await waitFor(() => [0, 1, 2].every((r) => existsSync(join(out, `env-${r}`))), 90_000, 'every rank ran');
    for (const [rank, node] of nodes.entries()) {
      const env = envOf(join(out, `env-${rank}`));
      const shard = instance.shards[rank]!;
      t.match(
        env,
        {
          TORUS_RANK: String(rank),
          TORUS_WORLD_SIZE: '3',
          RANK: String(rank),
          WORLD_SIZE: '3',
          MLX_RANK: String(rank),
          TORUS_INSTANCE_ID: 'e3',
          TORUS_NODE_ID: node,
          TORUS_LAYER_START: String(shard.startLayer),
          TORUS_LAYER_END: String(shard.endLayer),
          MASTER_PORT: String(instance.port + 1),
          USER_VAR: 'kept',
          LOCAL_RANK: '0',
          LOCAL_WORLD_SIZE: '1',
          GROUP_RANK: String(rank),
          GLOO_SOCKET_IFNAME: 'lo',
          NCCL_SOCKET_IFNAME: 'chosen-by-the-user',
        },
        `rank ${rank} environment (the interface of the planned loopback address; a user-given variable wins)`,
      );
      t.equal(env.TORUS_HOSTFILE, env.MLX_HOSTFILE, 'one hostfile for both names');
      t.equal(env.MASTER_ADDR, '127.0.0.1', 'coordinator address (loopback: rank 0 itself, or its planned address)');
      t.equal(
        env.MLX_JACCL_COORDINATOR,
        rank === 0 ? `0.0.0.0:${instance.port + 1}` : `127.0.0.1:${instance.port + 1}`,
      );
      const hosts = (JSON.parse(readFileSync(join(out, `hosts-${rank}.json`), 'utf8')) as string[][]).map(
        (entry) => entry[0],
      );
      const planned = instance.hostsByNode![node]!.map((h) => `${h.ip}:${h.port}`);
      t.same(hosts, planned, `rank ${rank} hostfile is the planned one`);
      t.equal(hosts[rank], `0.0.0.0:${instance.hostsByNode![node]![rank]!.port}`, 'own entry listens on all addresses');
      for (const nb of [(rank + 1) % 3, (rank + 2) % 3])
        t.match(hosts[nb], /^127\.0\.0\.1:\d+$/, `neighbour ${nb} at its planned address`);
    }
  },
);
