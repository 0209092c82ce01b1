/** The ring across lab namespaces: one rank per namespace over thunderbolt-labelled p2p links and over the LAN, every op checked. */
import { performance } from 'node:perf_hooks';
import t from 'tap';
import { within } from '../fixtures/within.js';
import { childExecArgv } from '../../src/runtime/module-url.js';
import { Lab, withLab } from '../../src/lab/index.js';
import { DTYPE_BYTES, type Dtype, type ReduceOp } from '../../src/native/kernels/index.js';
import { processLauncher, type RankMessage } from '../../src/bench/ring/launch.js';
import type { RankJob } from '../../src/bench/ring/rank-main.js';
import type { RankResult } from '../../src/bench/ring/sweep.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const noLab = skipOrFail(Lab.unavailableReason());

const N = 3;
t.setTimeout(400_000); // namespaces and one TS-loader process per rank are slow on a busy 2-vCPU machine

t.test('3 ranks in 3 namespaces: every op, float32/float16/int32, exact', { skip: noLab }, async (t) => {
  await withLab(
    t,
    {
      hosts: N,
      links: [
        { a: 0, b: 1, label: 'thunderbolt' },
        { a: 1, b: 2, label: 'thunderbolt' },
        { a: 2, b: 0, label: 'thunderbolt' },
      ],
    },
    async (lab) => {
      // Two launches (one per address set), several dtypes per launch: process start-up dominates here.
      const cases: { over: 'p2p' | 'lan'; port: number; sweeps: { dtype: Dtype; redop: ReduceOp }[] }[] = [
        {
          over: 'p2p',
          port: 32400,
          sweeps: [
            { dtype: 'float32', redop: 'sum' },
            { dtype: 'int32', redop: 'min' },
          ],
        },
        { over: 'lan', port: 32410, sweeps: [{ dtype: 'float16', redop: 'max' }] },
      ];
      for (const { over, port, sweeps } of cases) {
        // Elements: 1, n−1, 7 (not divisible by n), 1025 (odd), 262 145 (> 1 MiB of float32); all-gather sizes are totals.
        const sizesOf = (dtype: Dtype) => [1, N - 1, 7, 1025, 262_145].map((count) => count * DTYPE_BYTES[dtype] * N);
        const jobs: RankJob[] = Array.from({ length: N }, (_, rank) => ({
          connect: {
            rank,
            timeoutMs: 20_000,
            connectTimeoutMs: 20_000,
            hosts: Array.from({ length: N }, (_, j) =>
              j === rank
                ? { ip: '0.0.0.0', port }
                : { ip: over === 'p2p' ? lab.linkIp(rank, j) : (lab.hosts[j]?.lanIp ?? ''), port },
            ),
          },
          sweep: sweeps.map(({ dtype, redop }) => ({
            ops: ['all_reduce', 'all_gather', 'broadcast', 'sendrecv'] as const,
            sizes: sizesOf(dtype),
            warmup: 0,
            iters: 1,
            check: true,
            dtype,
            redop,
            root: 1,
          })),
        }));
        const rows: RankResult[][] = jobs.map(() => []);
        const errors: string[] = [];
        const directions: (boolean | undefined)[] = [];
        await processLauncher(
          (rank, command, args) => lab.spawn(rank, command, args, { stdio: ['ignore', 'pipe', 'pipe'] }),
          120_000,
        ).run(jobs, (rank, message: RankMessage) => {
          if (message.type === 'row') rows[rank]?.push(message.row);
          if (message.type === 'ready') directions[rank] = message.bidirectional;
          if (message.type === 'error') errors.push(`rank ${rank}: ${message.code} ${message.message}`);
        });
        const what = `${sweeps.map((s) => `${s.dtype} ${s.redop}`).join(', ')} over ${over}`;
        t.same(errors, [], `${what}: no rank failed`);
        // Default directions ('auto'): both over the ring of cables, one over the LAN (one interface for both neighbours).
        t.same(
          directions,
          [over === 'p2p', over === 'p2p', over === 'p2p'],
          `${what}: ${over === 'p2p' ? 'both ring directions' : 'one ring direction'} chosen from the interfaces`,
        );
        for (const [rank, list] of rows.entries()) {
          t.equal(list.length, 4 * 5 * sweeps.length, `${what}: rank ${rank} ran every op and size`);
          const wrong = list.filter((r) => r.wrong !== 0).map((r) => `${r.op} ${r.count}: ${r.wrong}`);
          t.same(wrong, [], `${what}: rank ${rank} bit-exact`);
        }
      }
    },
  );
});

t.test(
  'a cable cut mid-collective in the lab: every rank fails within the timeout naming a peer, processes exit',
  { skip: noLab },
  async (t) => {
    await withLab(
      t,
      {
        hosts: N,
        links: [
          { a: 0, b: 1 },
          { a: 1, b: 2 },
          { a: 2, b: 0 },
        ],
      },
      async (lab) => {
        const timeoutMs = 2000;
        const port = 32430;
        const lines: string[][] = [[], [], []];
        const children = Array.from({ length: N }, (_, rank) => {
          const hosts = Array.from({ length: N }, (_, j) =>
            j === rank ? { ip: '0.0.0.0', port } : { ip: lab.linkIp(rank, j), port },
          );
          const child = lab.spawn(
            rank,
            process.execPath,
            [
              ...childExecArgv(import.meta.url),
              new URL('./fixtures/rank-child.ts', import.meta.url).pathname,
              String(rank),
              JSON.stringify(hosts),
              String(1 << 20),
              String(timeoutMs),
            ],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          child.stdout?.on('data', (chunk: Buffer) =>
            lines[rank]?.push(...chunk.toString().split('\n').filter(Boolean)),
          );
          return child;
        });
        const exits = children.map(
          (child) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
        );
        // Wait until every rank has completed a few all-reduces, then black-hole the 0–1 cable.
        for (let i = 0; i < 600 && !lines.every((l) => l.some((x) => x === 'op 2')); i++)
          await new Promise((r) => setTimeout(r, 100));
        t.ok(
          lines.every((l) => l.includes('op 2')),
          'the ring runs across namespaces',
        );
        const cutAt = performance.now();
        await lab.cut(0, 1);
        const codes = await within(Promise.all(exits), timeoutMs * 3 + 10_000, null);
        t.ok(codes, `every rank exited ${Math.round(performance.now() - cutAt)} ms after the cut (no hang)`);
        for (const [rank, l] of lines.entries()) {
          const last = l.at(-1) ?? '';
          t.match(last, /^error TORUS_RING_(TIMEOUT|PEER_LOST)$/, `rank ${rank} reports ${last}`);
        }
      },
    );
  },
);
