/**
 * An artifact whose manifest no longer verifies (edited or truncated on disk) is not silently left out of what a
 * node lists: the service names it as damaged with the reason, logs it once, keeps it out of what it serves and
 * announces, and the count reaches /metrics.
 */
import t from 'tap';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderMetrics } from '../../src/api/prometheus.js';
import { setLogSink } from '../../src/runtime/log.js';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { storeRoot } from '../../src/artifacts/layout.js';
import { startNodes } from './fixtures.js';

t.test('a manifest that no longer verifies: listed as damaged with why, logged once, counted', async (t) => {
  const lines: string[] = [];
  setLogSink((line) => lines.push(line));
  t.teardown(() => setLogSink((line) => process.stderr.write(`${line}\n`)));
  const { nodes } = await startNodes(t, 1);
  const service = nodes[0]!.service;
  const src = mkdtempSync(join(tmpdir(), 'torus-damaged-'));
  t.teardown(() => rmSync(src, { recursive: true, force: true }));
  writeFileSync(join(src, 'weights.bin'), 'w'.repeat(5000));
  // Added as `artifacts add` does: into the node's store directly, from another process's store object.
  const cli = new ArtifactStore(storeRoot(nodes[0]!.dir));
  const good = await cli.add(join(src, 'weights.bin'), { name: 'good' });
  writeFileSync(join(src, 'other.bin'), 'o'.repeat(3000));
  const bad = await cli.add(join(src, 'other.bin'), { name: 'bad' });
  t.same(cli.scan().damaged, [], 'nothing damaged at first');

  appendFileSync(service.store.paths(bad.id).manifest, ' '); // no longer hashes to its id
  t.same(
    service.store.list().map((a) => a.id),
    [good.id],
    'what the store lists and serves is what verifies',
  );
  const damaged = service.damaged();
  t.match(damaged, [{ id: bad.id, name: 'bad', reason: /^manifest\.json: .*do not hash to/ }], 'named, with why');
  t.same(
    service.localHoldings().map((h) => h.id),
    [good.id],
    'not announced as held',
  );
  service.damaged();
  const warned = lines.filter((l) => l.includes('does not verify'));
  t.equal(warned.length, 1, 'logged once, not at every sync');
  t.match(JSON.parse(warned[0]!), { level: 'warn', artifactId: bad.id, name: 'bad', reason: /do not hash/ });

  const text = renderMetrics({
    node: { id: 'n0', name: 'n0', version: 'test', incarnation: 1, uptimeMs: 1, role: 'alone' },
    lastIndex: 0,
    topology: { nodes: [], links: [] },
    instances: [],
    metrics: { restarts: {}, damagedArtifacts: damaged.length },
  });
  t.match(text, /^torus_artifacts_damaged 1$/m, '/metrics counts it');
  await service.remove(bad.id);
  t.same(service.damaged(), [], 'removed, it is gone from the list');
});
