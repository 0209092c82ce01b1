/**
 * Jobs end to end: `GET /v1/instances/:id/logs?rank=N&follow=1` asked with curl (bearer token, nothing else) of a
 * node that does NOT hold rank N's log, on a real 3-host lab cluster: lines arrive while the rank is still writing,
 * and the answer ends when that rank exits (the other ranks still running), with every line once and in order.
 */
import t from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { API_PORT, E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { within } from '../fixtures/within.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

// A multi-node lab on a shared 2-core machine (forming the cluster alone took 70 s at load 20): more than the
// default per-file timeout, so a slow CI machine does not cut a healthy run; each wait inside stays bounded.
t.setTimeout(360_000);

const CURL = '/usr/bin/curl';
const why =
  Lab.unavailableReason() ??
  e2eUnavailableReason() ??
  (existsSync(CURL) ? undefined : `needs ${CURL} (apt-get install -y curl: the Debian package curl)`);

// Rank 1 prints a numbered tick every 0.1 s until its stop file appears, then "bye" and exits 0; the other ranks
// wait for theirs. (Files in a shared temp dir: the lab's namespaces share the file system.)
const SCRIPT =
  'i=0; while [ ! -e "$0/stop-$RANK" ] && [ $i -lt 1500 ]; do i=$((i+1)); [ "$RANK" = 1 ] && echo "tick $i"; sleep 0.1; done; echo "bye $RANK"';

t.test(
  'logs?follow=1 through a node that does not hold the rank: live lines, ends when the rank exits',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-follow-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(100_000, profiled);
      const placed = await c.nodes[0]!.fetch('/v1/instances', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instanceId: 'flw',
          minNodes: 3,
          workload: {
            id: 'ticker',
            kind: 'exec',
            memoryBytes: 1 << 20,
            layers: 3,
            command: '/bin/sh',
            args: ['-c', SCRIPT, dir],
          },
        }),
      });
      const instance = (await placed.json()) as { nodes: string[] };
      t.equal(placed.status, 201, 'placed');
      const holder = instance.nodes[1]!;
      const asker = c.nodes.find((n) => n.id !== holder)!;
      t.not(
        asker.id,
        holder,
        `asking h${asker.host}, which does not hold rank 1 (held by h${c.nodes.find((n) => n.id === holder)!.host})`,
      );

      // The instance was committed through node 0; the asker may be the member that has not applied it yet (then
      // its answer is an immediate 404 and curl ends before any tick).
      await c.until(
        'the asker to know the instance',
        async () => (await asker.tryGet('/v1/instances/flw')) ?? null,
        60_000,
      );

      // curl inside the asker's namespace, as a user on that machine would type it.
      const url = `http://127.0.0.1:${API_PORT}/v1/instances/flw/logs?rank=1&follow=1`;
      const noToken = await lab.exec(asker.host, [CURL, '-s', '-o', '/dev/null', '-w', '%{http_code}', url]);
      t.equal(noToken.stdout, '401', 'without the token: 401');
      const curl = lab.spawn(asker.host, CURL, ['-sSN', '-H', `Authorization: Bearer ${asker.token}`, url]);
      let out = '';
      curl.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
      });
      let curlErr = '';
      curl.stderr!.on('data', (d: Buffer) => {
        curlErr += d.toString();
      });
      let curlExit: number | null | undefined;
      const curlDone = new Promise<void>((resolve) =>
        curl.once('exit', (code) => {
          curlExit = code;
          resolve();
        }),
      );
      t.teardown(() => {
        if (curlExit === undefined) curl.kill('SIGKILL');
      });

      const ticks = () => out.split('\n').filter((l) => l.startsWith('tick ')).length;
      await c
        .until('ticks to arrive through the proxy', async () => ticks() >= 10, 60_000, 100)
        .catch((error: Error) => {
          // Say what curl got: an early error answer and a slow rank start look alike from the tick count.
          throw new Error(
            `${error.message}; curl exit ${curlExit}, stderr ${curlErr.trim()}, out ${out.slice(0, 400)}`,
          );
        });
      const seen = ticks();
      await c.until('more ticks while the rank writes', async () => ticks() >= seen + 5, 20_000, 100);
      t.equal(
        curlExit,
        undefined,
        `lines arrive while rank 1 is still writing (${ticks()} so far) and curl is still reading`,
      );

      writeFileSync(join(dir, 'stop-1'), '');
      const stoppedAt = Date.now();
      await within(curlDone, 20_000, undefined);
      t.equal(
        curlExit,
        0,
        `the answer ends when rank 1 exits (${Date.now() - stoppedAt} ms after it was told to stop); curl: ${curlErr}`,
      );
      const lines = out.split('\n').filter(Boolean);
      t.equal(lines.at(-1), 'bye 1', "its last line is the rank's last line");
      const n = lines.length - 1;
      t.same(
        lines,
        [...Array.from({ length: n }, (_, i) => `tick ${i + 1}`), 'bye 1'],
        `every line once, in order (${n} ticks)`,
      );
      const job = await asker.get<{ job: { state: string } }>('/v1/instances/flw');
      t.equal(job.job.state, 'running', 'the job itself still runs (ranks 0 and 2 wait)');

      writeFileSync(join(dir, 'stop-0'), '');
      writeFileSync(join(dir, 'stop-2'), '');
      await c.until(
        'the job to complete',
        async () => (await asker.tryGet<{ job: { state: string } }>('/v1/instances/flw'))?.job.state === 'completed',
        60_000,
        300,
      );
      const after = await lab.exec(asker.host, [
        CURL,
        '-sS',
        '-m',
        '20',
        '-H',
        `Authorization: Bearer ${asker.token}`,
        `${url.replace('rank=1', 'rank=2')}`,
      ]);
      t.equal(after.stdout, 'bye 2\n', 'following a finished rank returns its whole log and ends');
    });
  },
);
