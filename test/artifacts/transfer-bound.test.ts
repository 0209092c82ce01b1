/**
 * A transfer shows its bound beside it: `GET /v1/artifacts/transfers` (the service's `transfers()`) carries the
 * time no schedule beats over the measured links, valid under the OpenAPI document's schema.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { openApiDocument } from '../../src/api/openapi.js';
import { compiler } from '../api/fixtures/openapi-check.js';
import { startNodes, until } from './fixtures.js';

const CHUNK = 64 * 1024;

t.test('a transfer carries its bound: the bytes it lacks over the measured links, naming the limit', async (t) => {
  const {
    shared,
    nodes: [a, b],
  } = await startNodes(t, 2);
  const dir = mkdtempSync(join(tmpdir(), 'torus-art-bound-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'w.bin'), randomBytes(40 * CHUNK + 100));
  const added = await a!.service.store.add(join(dir, 'w.bin'), { name: 'w', chunkSize: CHUNK });
  await a!.service.announce(added.id);
  const link = { type: 'ethernet' as const, rttMs: 0.1, measuredAt: Date.now() };
  shared.state = {
    ...shared.state,
    links: [
      { source: 'n0', sink: 'n1', ip: '127.0.0.1', bandwidthBps: 2e9, ...link },
      { source: 'n1', sink: 'n0', ip: '127.0.0.1', bandwidthBps: 5e8, ...link },
    ],
  };
  await b!.service.fetch(added.id);
  await until('done', () => b!.service.transfer(added.id)?.state === 'complete');
  const answer = b!.service.transfers();
  const bound = answer.transfers[0]!.bound!;
  t.same(bound, {
    seconds: Math.round(((40 * CHUNK + 100) * 8 * 1000) / 2e9) / 1000,
    node: 'n0',
    side: 'out',
    bytes: 40 * CHUNK + 100,
    capacityBps: 2e9,
  });
  const validate = compiler(openApiDocument('test'))({ $ref: '#/components/schemas/ArtifactTransfers' });
  t.ok(validate(JSON.parse(JSON.stringify(answer))), JSON.stringify(validate.errors));
  const broken = { ...answer, transfers: [{ ...answer.transfers[0], bound: { ...bound, side: 'sideways' } }] };
  t.notOk(validate(broken), 'the schema says what a bound is');
});

t.test("a stage transfer's bound counts only the stage's chunks", async (t) => {
  const { makeModel } = await import('../../benchmarks/model-fixture/make-model.js');
  const { stageChunks, chunksBytes } = await import('../../src/artifacts/model/stage-chunks.js');
  const src = mkdtempSync(join(tmpdir(), 'torus-stage-bound-'));
  t.teardown(() => rmSync(src, { recursive: true, force: true }));
  makeModel({ out: join(src, 'm'), bytes: 6 * 2 ** 20, layers: 6, shards: 3, seed: 'bound' });
  const {
    shared,
    nodes: [a, b],
  } = await startNodes(t, 2);
  const added = await a!.service.store.add(join(src, 'm'), { name: 'tiny' });
  await a!.service.announce(added.id);
  const link = { type: 'ethernet' as const, rttMs: 0.1, measuredAt: Date.now() };
  shared.state = {
    ...shared.state,
    links: [
      { source: 'n0', sink: 'n1', ip: '127.0.0.1', bandwidthBps: 1e9, ...link },
      { source: 'n1', sink: 'n0', ip: '127.0.0.1', bandwidthBps: 1e9, ...link },
    ],
  };
  const stage = { fromLayer: 2, toLayer: 4 };
  await b!.service.fetch(added.id, { stage });
  await until('stage done', () => b!.service.transfer(added.id)?.state === 'complete');
  const want = stageChunks(
    a!.service.store.manifest(added.id)!.manifest,
    shared.state.artifacts![added.id]!.model!,
    stage,
  );
  const bytes = chunksBytes(a!.service.store.manifest(added.id)!.manifest, want);
  t.ok(bytes < added.bytes / 2, `the stage is a part of the model (${bytes} of ${added.bytes} bytes)`);
  t.match(b!.service.transfer(added.id)!.bound, { bytes, capacityBps: 1e9 }, 'the bound is for the stage alone');
});
