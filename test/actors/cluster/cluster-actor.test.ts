/** The cluster actor in real worker threads under the runtime: two nodes (two runtimes) on loopback. */
import t from 'tap';
import { createActor } from 'xstate';
import { Runtime } from '../../../src/runtime/index.js';
import { siblingModule } from '../../../src/runtime/module-url.js';
import { clusterMachine } from '../../../src/actors/cluster/machine.js';

const clusterModule = siblingModule(import.meta.url, '../../../src/actors/cluster/worker');
const keeperModule = siblingModule(import.meta.url, '../../../src/actors/topology-keeper/worker');

async function until(what: string, fn: () => Promise<boolean>, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('machine: role is the state value', async (t) => {
  const a = createActor(clusterMachine, { input: { nodeId: 'x' } }).start();
  t.equal(a.getSnapshot().value, 'discovering');
  a.send({ type: 'cluster.role', role: 'leader', term: 2, leader: 'x' });
  t.equal(a.getSnapshot().value, 'leader');
  t.equal(a.getSnapshot().context.term, 2);
  a.send({ type: 'cluster.role', role: 'follower', term: 3, leader: 'y' });
  t.equal(a.getSnapshot().value, 'follower');
  t.equal(a.getSnapshot().context.leader, 'y');
  const emitted: string[] = [];
  a.on('keeper.resync', (e) => emitted.push(e.type));
  a.send({ type: 'topology.gap', from: 3, to: 4 });
  t.same(emitted, ['keeper.resync']);
  a.stop();
});

t.test('two runtimes: cluster actors agree and feed their topology keepers', async (t) => {
  const rts: Runtime[] = [];
  t.teardown(async () => {
    for (const r of rts) await r.shutdown({ deadlineMs: 3000 }).catch(() => undefined);
  });
  const start = async (nodeId: string, port: number, peers: string[]) => {
    const rt = new Runtime({ nodeId });
    rts.push(rt);
    rt.register('commands', async (body) => ({
      events: [],
      outcome: { echoed: (body as unknown as { command: { type: string } }).command.type },
    }));
    await rt.supervise({ name: 'topology-keeper', module: keeperModule, options: { nodeId, reportTo: 'cluster' } });
    await rt.supervise({
      name: 'cluster',
      module: clusterModule,
      options: {
        nodeId,
        incarnation: 1,
        clusterName: 'actor-test',
        host: '127.0.0.1',
        port,
        peers,
        mdns: false,
        failureTimeoutMs: 1500,
      },
    });
    return rt;
  };
  const port = 40000 + Math.floor(Math.random() * 20000);
  const a = await start('a', port, []);
  const b = await start('b', port + 1, [`127.0.0.1:${port}`]);
  await until('both nodes in both keepers', async () => {
    const sa = await a.request<{ state: { nodes: object }; digest: string }>('topology-keeper', { type: 'state' });
    const sb = await b.request<{ state: { nodes: object }; digest: string }>('topology-keeper', { type: 'state' });
    return Object.keys(sa.state.nodes).length === 2 && sa.digest === sb.digest;
  });
  const role = await b.request<{ role: string; leader: string }>('cluster', { type: 'role' });
  t.equal(role.role, 'follower');
  t.equal(role.leader, 'a');
  t.equal((role as { leaderId?: string }).leaderId, 'a', 'leaderId for the API facade');
  const members = await b.request<{ nodeId: string }[]>('cluster', { type: 'members' });
  t.same(
    members.map((m) => m.nodeId),
    ['a'],
  );
  const out = await b.request<{ indices: number[] }>('cluster', {
    type: 'propose',
    event: { type: 'LinkUp', source: 'b', sink: 'a', ip: '127.0.0.1', linkType: 'ethernet' },
  });
  t.equal(out.indices.length, 1);
  t.same(await b.request('cluster', { type: 'command', command: { type: 'Ping' } }), { echoed: 'Ping', indices: [] });
  await t.rejects(b.request('cluster', { type: 'propose', event: { type: 'LinkUp' } }), {
    code: 'TORUS_PROTOCOL_INVALID',
  });
  const snap = await b.request<{ value: string; context: { term: number } }>('cluster', { type: 'snapshot' });
  t.equal(snap.value, 'follower', 'the role is visible in the snapshot');
  t.same(await b.request('cluster', { type: 'peers' }), []);
});
