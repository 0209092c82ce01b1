/**
 * The torch Gloo side of `bench ring` (gloo.ts + benchmarks/ring/gloo_rank.py): without torch the result names the
 * package; with Debian's python3-torch, two real Gloo ranks on loopback (GLOO_SOCKET_IFNAME=lo) report a row per
 * size with mean, median and p99, and a failing rank is reported, not hung on.
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import {
  findTorchPython,
  GLOO_MISSING,
  glooScript,
  runGlooAllReduce,
  type EnvSpawner,
} from '../../src/bench/ring/gloo.js';
import { freePorts } from './fixtures/helpers.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const local: EnvSpawner = (_host, command, args, env) =>
  spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
const torch = findTorchPython();

t.test('no torch: the comparison is skipped with the package named', async (t) => {
  t.equal(findTorchPython(['/nonexistent/python3']), null);
  const r = await runGlooAllReduce(
    local,
    { ranks: 2, sizes: [1024], warmup: 1, iters: 1, masterIp: '127.0.0.1', port: 1, iface: 'lo', timeoutMs: 1000 },
    null,
  );
  t.same(r, { ok: false, reason: GLOO_MISSING });
  t.match(GLOO_MISSING, /python3-torch/);
  t.match(glooScript() ?? '', /benchmarks\/ring\/gloo_rank\.py$/, 'the rank script is found from src/');
});

t.test(
  'two Gloo ranks on loopback',
  { skip: skipOrFail(torch ? undefined : GLOO_MISSING), timeout: 170_000 },
  async (t) => {
    const [port] = await freePorts(1);
    const r = await runGlooAllReduce(
      local,
      {
        ranks: 2,
        sizes: [4096, 1 << 20],
        warmup: 1,
        iters: 3,
        masterIp: '127.0.0.1',
        port: port!,
        iface: 'lo',
        timeoutMs: 150_000,
      },
      torch,
    );
    if (!r.ok) return t.fail(r.reason);
    t.same(
      r.rows.map((x) => x.bytes),
      [4096, 1 << 20],
      'a row per size',
    );
    t.ok(
      r.rows.every((x) => x.timeUs > 0 && x.medianUs > 0 && x.p99Us >= x.medianUs && x.busbw > 0),
      `timed: ${r.rows.map((x) => `${x.bytes} B ${x.busbw.toFixed(3)} GB/s`).join(', ')}`,
    );
    t.match(r, { python: torch!.python, iface: 'lo' });

    // A rank that cannot rendezvous (the other one never starts) fails within the bound, naming itself.
    const [p2] = await freePorts(1);
    const lonely: EnvSpawner = (host, command, args, env) =>
      host === 0
        ? local(host, command, args, env)
        : spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const started = Date.now();
    const bad = await runGlooAllReduce(
      lonely,
      {
        ranks: 2,
        sizes: [4096],
        warmup: 1,
        iters: 1,
        masterIp: '127.0.0.1',
        port: p2!,
        iface: 'lo',
        timeoutMs: 20_000,
      },
      torch,
    );
    t.notOk(bad.ok, 'the run is reported as failed');
    t.match(!bad.ok && bad.reason, /rank 1 exited 3/);
    t.ok(
      Date.now() - started < 15_000,
      `the group is stopped at once (${Date.now() - started} ms), not after the 20 s bound`,
    );
  },
);
