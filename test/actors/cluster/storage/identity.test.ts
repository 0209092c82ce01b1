import t from 'tap';
import { loadOrCreateIdentity, readIdentity } from '../../../../src/actors/cluster/storage/identity.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

t.test('id is created once and kept; incarnation grows each start', async (t) => {
  const dir = t.testdir({});
  t.equal(await readIdentity(dir), null);
  const first = await loadOrCreateIdentity(dir);
  t.match(first.nodeId, /^n-[0-9a-f]{16}$/);
  t.equal(first.incarnation, 1);
  const second = await loadOrCreateIdentity(dir);
  t.equal(second.nodeId, first.nodeId);
  t.equal(second.incarnation, 2);
  t.same(await readIdentity(dir), second);
});

t.test('a requested id is used; malformed files are a config error', async (t) => {
  const dir = t.testdir({});
  t.equal((await loadOrCreateIdentity(dir, { nodeId: 'h1' })).nodeId, 'h1');
  await t.rejects(loadOrCreateIdentity(dir, { nodeId: '../x' }), { code: 'TORUS_CONFIG_INVALID' });
  await writeFile(join(dir, 'identity.json'), '{"nodeId": 5}');
  await t.rejects(loadOrCreateIdentity(dir), { code: 'TORUS_CONFIG_INVALID' });
});
