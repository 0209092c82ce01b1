/** DELETE /v1/members/:id and `members remove` (the route and CLI over the in-process API node). */
import t from 'tap';
import { startApi, raw } from '../api/fixtures/harness.js';
import { runMembersCommand } from '../../src/cli/members.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (s: string) => out.push(s), isTTY: false }, stderr: { write: (s: string) => err.push(s) } }, out: () => out.join(''), err: () => err.join('') };
}

t.test('the route removes a member and refuses itself and unknown ids', async (t) => {
  const { api, node } = await startApi(t);
  const self = await raw(api.url, 'DELETE', '/v1/members/node-a');
  t.equal(self.status, 400, 'removing the answering node → 400');
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
  t.equal(await runMembersCommand(['remove', 'node-b', 'node-c', '--api', api.url], c.io), 0, c.err());
  t.match(c.out(), /removed node-b.*\nremoved node-c/s);
  t.same(Object.keys(node.cluster.nodes), ['node-a']);
  const bad = io();
  t.equal(await runMembersCommand(['remove', 'ghost', '--api', api.url], bad.io), 1);
  t.match(bad.err(), /not a member/);
  const usage = io();
  t.equal(await runMembersCommand(['list', '--api', api.url], usage.io), 2, 'unknown verb → usage error');
});
