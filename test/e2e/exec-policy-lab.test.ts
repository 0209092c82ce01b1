/**
 * Exec policy end to end, real nodes in lab namespaces: h0 `--allow-exec=python3`, h1 `--allow-exec`, h2 without
 * (exec off), all `--max-instances=2`. Placement skips the nodes that would refuse and a refusal names them with
 * their rule; python3 runs where only python3 is allowed; the instance quota answers 429. (The spawn-time refusal
 * after a restart without --allow-exec: exec-restart-refusal-lab.test.ts.)
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

interface Inst {
  id: string;
  nodes: string[];
  status: string;
  reason?: string;
  runners: { node: string; status: string; reason?: string }[];
}

/** Processes in a host's namespace whose command line contains `marker`. */
async function _withMarker(lab: Lab, host: number, marker: string): Promise<number> {
  return (await lab.commandLines(host)).filter((l) => l.includes(marker)).length;
}

t.test(
  'exec policy, placement refusals and quotas across 3 lab hosts',
  { timeout: 178_000, skip: skipOrFail(why) },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'torus-exec-policy-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const allow: Record<number, string[]> = { 0: ['--allow-exec=python3'], 1: ['--allow-exec'], 2: [] };
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: (h) => ['--iface-type', 'lan0=ethernet', '--max-instances', '2', ...allow[h]!],
      });
      await c.converged(100_000, profiled);
      const [h0, h1, h2] = c.nodes.map((n) => n.id);
      const marker = `torus-e2e-marker-${process.pid}`;
      const shArgs = [
        '--exec',
        'sh',
        `--arg=-c`,
        `--arg=echo "$TORUS_NODE_ID" >> ${out}/ran-$TORUS_INSTANCE_ID; exec sleep 300 # ${marker}`,
      ];

      const refused = await c.cli(
        1,
        [
          'place',
          '--workload',
          'w',
          '--memory',
          '1MiB',
          '--layers',
          '2',
          '--min-nodes',
          '2',
          ...shArgs,
          '--instance-id',
          'sh-2',
        ],
        90_000,
      );
      t.not(refused.code, 0, 'sh on two nodes is refused');
      t.match(
        refused.stderr + refused.stdout,
        new RegExp(`${h0}.*"sh" is not allowed by --allow-exec=python3`),
        'names h0 and its allow-list',
      );
      t.match(
        refused.stderr + refused.stdout,
        new RegExp(`${h2}.*exec is off \\(no --allow-exec\\)`),
        'names h2: exec off',
      );

      const sh = await c.cli(
        0,
        ['place', '--workload', 'w', '--memory', '1MiB', '--layers', '2', ...shArgs, '--instance-id', 'sh-1'],
        90_000,
      );
      t.equal(sh.code, 0, `sh placed (${sh.stderr.trim()})`);
      const shInst = await c.nodes[0]!.get<Inst>('/v1/instances/sh-1');
      t.same(shInst.nodes, [h1], 'on the only node that allows sh');

      const py = await c.cli(
        2,
        [
          'place',
          '--workload',
          'p',
          '--memory',
          '1MiB',
          '--layers',
          '2',
          '--nodes',
          h0!,
          '--exec',
          '/usr/bin/python3',
          `--arg=-c`,
          `--arg=import os, time; open("${out}/ran-" + os.environ["TORUS_INSTANCE_ID"], "a").write(os.environ["TORUS_NODE_ID"] + "\\n"); time.sleep(300)`,
          '--instance-id',
          'py-1',
        ],
        90_000,
      );
      t.equal(py.code, 0, `python3 placed on h0 (${py.stderr.trim()})`);
      await c.until(
        'python3 and sh ran',
        async () => existsSync(join(out, 'ran-py-1')) && existsSync(join(out, 'ran-sh-1')),
        60_000,
        500,
      );
      t.equal(readFileSync(join(out, 'ran-py-1'), 'utf8').trim(), h0, 'python3 ran on h0 (--allow-exec=python3)');

      const third = await c.cli(
        0,
        ['place', '--workload', 'r', '--memory', '1MiB', '--layers', '2', '--instance-id', 'ring-1'],
        90_000,
      );
      t.not(third.code, 0, 'a third live instance is refused');
      t.match(third.stderr + third.stdout, /--max-instances=2/, 'naming the quota');
    });
  },
);
