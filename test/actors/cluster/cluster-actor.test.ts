/**
 * The thread that owns the replicated state (the topology keeper, with the agreement in it) in real worker threads
 * under the runtime: two nodes (two runtimes) on loopback.
 */
import t from 'tap';
import { createActor } from 'xstate';
import { Runtime } from '../../../src/runtime/index.js';
import { siblingModule } from '../../../src/runtime/module-url.js';
import { clusterMachine } from '../../../src/actors/cluster/machine.js';

const clusterModule = siblingModule(import.meta.url, '../../../src/actors/cluster/worker');
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';

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
  a.send({
    type: 'cluster.progress',
    lastIndex: 4,
    lastTerm: 3,
    digest: 'd',
    counts: { nodes: 2, links: 0, instances: 0, tasks: 0 },
  });
  t.match(a.getSnapshot().context, { lastIndex: 4, lastTerm: 3, digest: 'd', counts: { nodes: 2 } });
  a.stop();
});

t.test('two runtimes: the agreement applies each entry once, to the state the keeper answers from', async (t) => {
  const rts: Runtime[] = [];
  t.teardown(async () => {
    for (const r of rts) await r.shutdown({ deadlineMs: 3000 }).catch(() => undefined);
  });
  const streams: Record<string, number[]> = { a: [], b: [] };
  const start = async (nodeId: string, port: number, peers: string[]) => {
    const rt = new Runtime({ nodeId });
    rts.push(rt);
    rt.register('commands', async (body) => ({
      events: [],
      outcome: { echoed: (body as unknown as { command: { type: string } }).command.type },
    }));
    rt.register('node-events', (body) => {
      if (body.type === 'applied') streams[nodeId]!.push(...(body.entries as { index: number }[]).map((e) => e.index));
      // A replaced state is a new starting point: what follows continues from its index (-index marks it here).
      if (body.type === 'state-replaced') streams[nodeId]!.push(-(body.lastIndex as number));
      return null;
    });
    await rt.supervise({
      name: 'topology-keeper',
      module: clusterModule,
      aliases: ['cluster'],
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
  t.same(a.actors(), ['topology-keeper', 'cluster'], 'one thread, both addresses');
  await until('both nodes in both keepers', async () => {
    const sa = await a.request<{ state: { nodes: object }; digest: string }>('topology-keeper', { type: 'state' });
    const sb = await b.request<{ state: { nodes: object }; digest: string }>('topology-keeper', { type: 'state' });
    return Object.keys(sa.state.nodes).length === 2 && sa.digest === sb.digest;
  });
  const role = await b.request<{ role: string; leader: string }>('cluster', { type: 'role' });
  t.equal(role.role, 'follower');
  t.equal(role.leader, 'a');
  t.notOk('leaderId' in role, 'one name across the thread boundary: leader (the API names it leaderId)');
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

  // The committed stream: every index once, in order, and the keeper's answer is the state it was applied to.
  const answer = await b.request<{ state: never; digest: string; lastIndex: number }>('topology-keeper', {
    type: 'state',
  });
  await until('the stream reached the answer', async () =>
    [streams.a!, streams.b!].every((s) => Math.abs(s.at(-1) ?? 0) >= answer.lastIndex),
  );
  const upTo = (s: number[]) => s.filter((i) => Math.abs(i) <= answer.lastIndex);
  t.same(
    upTo(streams.a!),
    Array.from({ length: answer.lastIndex }, (_, k) => k + 1),
    'the leader was sent each applied entry once, in index order',
  );
  const fromB = upTo(streams.b!);
  const base = fromB[0] !== undefined && fromB[0] <= 0 ? -fromB[0] : 0; // b joined by a snapshot install
  t.same(
    fromB.filter((i) => i > 0),
    Array.from({ length: answer.lastIndex - base }, (_, k) => base + k + 1),
    `the follower: each entry after its starting point (${base}) once, in order`,
  );
  t.equal(stateDigest(answer.state), answer.digest, 'the answered state is the applied one, byte-identical');
  t.match(b.snapshot('cluster'), { value: 'follower' });
  t.equal(b.snapshot('cluster'), b.snapshot('topology-keeper'), 'one view for both addresses');
});
