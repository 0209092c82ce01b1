/** DELETE /v1/members/:id and `members remove` (the route and CLI over the in-process API node). */
import t from 'tap';
import { startApi, raw, TEST_TOKEN } from '../../api/fixtures/harness.js';
import { runMembersCommand } from '../../../src/cli/members.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: { write: (s: string) => out.push(s), isTTY: false }, stderr: { write: (s: string) => err.push(s) } },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

t.test('the route removes a member and refuses itself and unknown ids; it needs the API token', async (t) => {
  const { api, node } = await startApi(t);
  const anon = await raw(api.url, 'DELETE', '/v1/members/node-c', undefined, { authorization: '' });
  t.equal(anon.status, 401, 'anonymous → 401');
  t.ok(node.cluster.nodes['node-c'], 'nothing removed');
  const self = await raw(api.url, 'DELETE', '/v1/members/node-a');
  t.equal(self.status, 409, 'removing the answering node → 409 (a conflict with state, not a malformed request)');
  const unknown = await raw(api.url, 'DELETE', '/v1/members/nobody');
  t.equal(unknown.status, 404);
  t.match(unknown.json(), { error: { code: 'TORUS_NODE_UNKNOWN' } });
  const ok = await raw(api.url, 'DELETE', '/v1/members/node-c');
  t.equal(ok.status, 200);
  t.match(ok.json(), { nodeId: 'node-c', status: 'removed' });
  t.notOk(node.cluster.nodes['node-c'], 'NodeGone applied');
});

t.test('members remove ID...: one request per id, in order; errors exit non-zero', async (t) => {
  const { api, node } = await startApi(t);
  const c = io();
  t.equal(
    await runMembersCommand(['remove', 'node-b', 'node-c', '--api', api.url, '--token', TEST_TOKEN], c.io),
    0,
    c.err(),
  );
  t.match(c.out(), /removed node-b.*\nremoved node-c/s);
  t.same(Object.keys(node.cluster.nodes), ['node-a']);
  const bad = io();
  t.equal(await runMembersCommand(['remove', 'ghost', '--api', api.url, '--token', TEST_TOKEN], bad.io), 1);
  t.match(bad.err(), /not a member/);
  const usage = io();
  t.equal(
    await runMembersCommand(['list', '--api', api.url, '--token', TEST_TOKEN], usage.io),
    2,
    'unknown verb → usage error',
  );
});
