/**
 * Exec policy end to end: a node restarted without `--allow-exec` refuses, at spawn time, the exec instance that the
 * replicated state still assigns to it (the "the command ran again on every restart"): its runner is
 * Failed naming the node and the rule, the instance fails, and the command never starts again.
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
async function withMarker(lab: Lab, host: number, marker: string): Promise<number> {
  return (await lab.commandLines(host)).filter((l) => l.includes(marker)).length;
}

t.test(
  'a node restarted without --allow-exec refuses the exec instance the state gives it',
  { timeout: 178_000, skip: skipOrFail(why) },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'torus-exec-restart-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const allow: Record<number, string[]> = { 0: ['--allow-exec'], 1: ['--allow-exec'], 2: ['--allow-exec'] };
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        failureTimeoutMs: 60_000, // h1 restarts in place: it must not be declared gone (that would re-place the job)
        nodeArgs: (h) => ['--iface-type', 'lan0=ethernet', ...allow[h]!],
      });
      await c.converged(120_000, profiled);
      const h1 = c.nodes[1]!.id;
      const marker = `torus-e2e-marker-${process.pid}`;
      const shArgs = [
        '--exec',
        'sh',
        `--arg=-c`,
        `--arg=echo "$TORUS_NODE_ID" >> ${out}/ran-$TORUS_INSTANCE_ID; exec sleep 300 # ${marker}`,
      ];
      const sh = await c.cli(
        0,
        [
          'place',
          '--workload',
          'w',
          '--memory',
          '1MiB',
          '--layers',
          '2',
          '--nodes',
          h1,
          ...shArgs,
          '--instance-id',
          'sh-1',
        ],
        90_000,
      );
      t.equal(sh.code, 0, `sh placed on h1 (${sh.stderr.trim()})`);
      await c.until('sh ran', async () => existsSync(join(out, 'ran-sh-1')), 60_000, 500);
      // h1 crashes and comes back without --allow-exec: the state still gives it sh-1.
      c.nodes[1]!.kill('SIGKILL');
      await c.until('h1 exited', async () => !c.nodes[1]!.alive, 10_000, 100);
      await c.until(
        'the old command is gone with its node',
        async () => (await withMarker(lab, 1, marker)) === 0,
        20_000,
        500,
      );
      allow[1] = [];
      c.startNode(1);
      const failed = await c.until(
        'sh-1 failed',
        async () => {
          const v = await c.nodes[0]!.tryGet<Inst>('/v1/instances/sh-1');
          return v?.status === 'failed' && v;
        },
        90_000,
        500,
      );
      t.match(
        failed.reason,
        new RegExp(`node ${h1} refuses to run "sh": exec is off \\(no --allow-exec\\)`),
        'the instance fails naming the node and the rule',
      );
      const runner = failed.runners.find((r) => r.node === h1);
      t.match(runner, { status: 'Failed', reason: /exec is off/ }, 'its runner status is Failed with the reason');
      await new Promise((r) => setTimeout(r, 2000));
      t.equal(await withMarker(lab, 1, marker), 0, 'no process with the command in h1');
      t.equal(
        readFileSync(join(out, 'ran-sh-1'), 'utf8').trim().split('\n').length,
        1,
        'the command ran once, before the restart, never after',
      );
    });
  },
);
