/**
 * Finished runs collected by a real node: with `--keep-finished-runs 2`, after 2+4 completed jobs the node holds
 * the runner directories of the newest 2 and of the job still running, and keeps answering its API throughout.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { runnerDir } from '../../src/actors/runner-supervisor/shared/run-dir.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.setTimeout(300_000);
const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const K = 2;

t.test(
  'a node keeps the newest K finished runs and every running one',
  { timeout: 280_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 2 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet', '--keep-finished-runs', String(K)],
      });
      await c.converged(150_000, profiled);
      const node = c.nodes[0]!;
      const place = async (id: string, script: string): Promise<string[]> => {
        const res = await node.fetch('/v1/instances', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            instanceId: id,
            minNodes: 2,
            workload: {
              id: 'w',
              kind: 'exec',
              memoryBytes: 1 << 20,
              layers: 2,
              command: '/bin/sh',
              args: ['-c', script],
            },
          }),
        });
        t.equal(res.status, 201, `${id} placed`);
        return ((await res.json()) as { nodes: string[] }).nodes;
      };
      await place('long', 'echo long; exec sleep 200');
      const ids = Array.from({ length: K + 4 }, (_, i) => `done-${i}`);
      for (const id of ids) {
        await place(id, `echo ${id}`);
        await c.until(
          `${id} completed`,
          async () => (await node.tryGet<{ status: string }>(`/v1/instances/${id}`))?.status === 'completed',
          60_000,
        );
      }
      const dirsOf = (n: (typeof c.nodes)[number]): string[] => readdirSync(join(n.dataDir, 'runners')).sort();
      const expected = (nodeId: string): string[] =>
        ['long', ...ids.slice(-K)].map((id) => basename(runnerDir('/', id, nodeId))).sort();
      for (const n of c.nodes) {
        await c.until(
          `h${n.host} to keep ${K} finished runs`,
          async () => JSON.stringify(dirsOf(n)) === JSON.stringify(expected(n.id!)),
          60_000,
        );
        t.same(dirsOf(n), expected(n.id!), `h${n.host}: the running job and the newest ${K} finished`);
        t.ok(await n.tryGet('/v1/node'), `h${n.host} answers`);
      }
      const long = await node.tryGet<{ status: string }>('/v1/instances/long');
      t.equal(long?.status, 'active', 'the running job runs on');
    });
  },
);
