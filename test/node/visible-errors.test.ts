/**
 * Errors a real node (startNode, every actor, loopback, no mDNS) shows instead of hiding. An exec job whose stdout
 * cannot be written at first (its log file is a link to /dev/full: ENOSPC on every write): the dropped output is
 * counted in /metrics, and once the file takes output again the job's log, as the logs route serves it, says where
 * output is missing and why. An artifact whose manifest was damaged on disk: `artifacts ls` and /metrics show it.
 * Its own file: starting a whole node is slow on a loaded machine.
 */
import t from 'tap';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerDir } from '../../src/actors/runner-supervisor/shared/run-dir.js';
import { segmentName } from '../../src/actors/runner-supervisor/shared/log-segments.js';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { storeRoot } from '../../src/artifacts/layout.js';
import { startLoopbackNode } from '../fixtures/loopback-node.js';
import { runArtifactsCommand } from '../../src/cli/artifacts.js';

t.setTimeout(300_000);

t.test('dropped runner output and a damaged artifact, on a real node', { timeout: 280_000 }, async (t) => {
  const { node, url, dataDir, auth } = await startLoopbackNode(t, ['--allow-exec']);
  if (!auth.authorization) throw new Error('a node started without --insecure-open has a credential');
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { ...auth, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    });
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 120_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const got = await probe();
      if (got !== undefined) return got;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const dir = runnerDir(dataDir, 'chatty', node.identity.nodeId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const segment = join(dir, segmentName('stdout', 0));
  symlinkSync('/dev/full', segment);
  const go = join(dataDir, 'go');
  // The job prints, then waits until the test has given the log room again, then prints once more.
  const script = `echo first; while [ ! -e ${go} ]; do sleep 0.1; done; echo second`;
  const placed = await until('a placement (the node profiled)', async () => {
    const res = await api('/v1/instances', {
      method: 'POST',
      body: JSON.stringify({
        instanceId: 'chatty',
        minNodes: 1,
        workload: {
          id: 'chatty',
          kind: 'exec',
          memoryBytes: 1 << 20,
          layers: 1,
          command: '/bin/sh',
          args: ['-c', script],
        },
      }),
    });
    const body = await res.text();
    return res.status === 201 ? body : undefined;
  });
  t.ok(placed, 'placed');

  const dropped = await until('the dropped bytes in /metrics', async () => {
    const text = await (await api('/metrics')).text();
    const m = /^torus_runner_log_dropped_bytes_total\{stream="stdout"\} (\d+)$/m.exec(text);
    return m && Number(m[1]) > 0 ? Number(m[1]) : undefined;
  });
  t.equal(dropped, 'first\n'.length, '/metrics counts the line that was lost');

  rmSync(segment);
  writeFileSync(go, '');
  await until('the job to complete', async () => {
    const v = (await (await api('/v1/instances/chatty')).json()) as { job?: { state: string } };
    return v.job?.state === 'completed' ? true : undefined;
  });
  const log = await (await api('/v1/instances/chatty/logs?rank=0')).text();
  t.match(
    log,
    /^… 6 bytes of output could not be written \(ENOSPC: [^)]*\) …\nsecond\n$/,
    'the logs route shows where output is missing, and why',
  );
  t.ok(existsSync(segment), 'the log file was opened again');

  // An artifact added as `artifacts add` does, whose manifest is then damaged on disk.
  writeFileSync(join(dataDir, 'weights.bin'), 'w'.repeat(4096));
  const added = await new ArtifactStore(storeRoot(dataDir)).add(join(dataDir, 'weights.bin'), { name: 'weights' });
  writeFileSync(new ArtifactStore(storeRoot(dataDir)).paths(added.id).manifest, '{}');
  const out: string[] = [];
  const code = await runArtifactsCommand(['ls', '--api', url, '--data-dir', dataDir], {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => out.push(s) },
  });
  t.equal(code, 0, out.join(''));
  t.match(
    out.join(''),
    new RegExp(
      `DAMAGED on this node \\(1\\)\\n.*\\n  ${added.id.slice(0, 16)}  weights  manifest\\.json: .*do not hash`,
    ),
    '`artifacts ls` shows it damaged, with why',
  );
  t.match(await (await api('/metrics')).text(), /^torus_artifacts_damaged 1$/m, '/metrics counts it');
});
