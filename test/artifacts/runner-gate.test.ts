/**
 * The runner hook on one machine: each placed node works out its upstream in the instance's chain
 * from the state alone; the runner's environment names the artifacts; a runner whose workload lists artifacts is
 * spawned only once the gate resolves and fails with the gate's reason otherwise; the node-side gate fetches a
 * missing artifact (as a chain link) and answers `failed` with a clear reason when the transfer cannot happen.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEvent } from '../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../src/actors/topology-keeper/state.js';
import type { ClusterEvent } from '../../src/protocols/events.js';
import {
  artifactEnv,
  chainUpstream,
  decodeRunnerArtifactsRequest,
  RunnerArtifactGate,
} from '../../src/artifacts/runner-gate.js';
import { instanceArtifacts } from '../../src/artifacts/instance-progress.js';
import { RunnerManager } from '../../src/actors/runner-supervisor/supervisor/runner-manager.js';
import type { ManagerEvent } from '../../src/actors/runner-supervisor/supervisor/runner-manager-options.js';
import { loopbackInstance, waitFor } from '../actors/runner-supervisor/fixtures/helpers.js';
import { startNodes, until } from './fixtures.js';

const ID = 'a'.repeat(64);

function stateWith(nodes: string[], holders: Record<string, number>, chunks = 4): ClusterState {
  let s = emptyState;
  const apply = (event: ClusterEvent): void => {
    s = applyEvent(s, { index: s.lastIndex + 1, term: 1, event, at: 1000 + s.lastIndex });
  };
  nodes.forEach((n, i) =>
    apply({
      type: 'NodeJoined',
      nodeId: n,
      name: n,
      incarnation: 1,
      apiPort: 1,
      apiAddresses: [{ ip: `10.77.0.${i + 1}`, port: 1 }],
      version: 't',
    }),
  );
  for (const [n, have] of Object.entries(holders))
    apply({
      type: 'ArtifactHeld',
      nodeId: n,
      artifactId: ID,
      name: 'w',
      bytes: chunks * 100,
      chunks,
      have,
      ...(have < chunks ? { rateBps: 5000 } : {}),
    });
  return s;
}

t.test('chain upstream: from the state alone, no loops, a holder outside the placement heads the chain', async (t) => {
  const order = ['a', 'b', 'c', 'd'];
  const inside = stateWith([...order, 'x'], { b: 4, x: 4 });
  t.same(
    order.map((n) => chainUpstream(inside, n, order, ID)),
    ['d', 'a', 'b', 'c'],
    'b holds it: b → c → d → a',
  );
  const outside = stateWith([...order, 'x'], { x: 4, a: 1 });
  t.same(
    order.map((n) => chainUpstream(outside, n, order, ID)),
    ['x', 'a', 'b', 'c'],
    'only x holds it: x → a → b → c → d',
  );
  t.equal(chainUpstream(outside, 'z', order, ID), undefined, 'not placed: any holder');
  t.equal(chainUpstream(emptyState, 'a', order, ID), undefined, 'unknown artifact');
});

t.test('environment: TORUS_ARTIFACT_<NAME> and TORUS_ARTIFACT_<id12>', async (t) => {
  const env = artifactEnv([
    { id: 'b'.repeat(64), name: 'llama-3.1 8B', path: '/s/b/files' },
    { id: 'c'.repeat(64), name: 'Llama_3.1_8b', path: '/s/c/files' },
  ]);
  t.same(
    env,
    {
      TORUS_ARTIFACT_LLAMA_3_1_8B: '/s/b/files',
      [`TORUS_ARTIFACT_${'b'.repeat(12)}`]: '/s/b/files',
      [`TORUS_ARTIFACT_${'c'.repeat(12)}`]: '/s/c/files',
    },
    'the first of two names that map to one variable keeps it; both keep their id form',
  );
  t.throws(() => decodeRunnerArtifactsRequest({ instanceId: 'i', artifacts: ['../x'], order: [] }), /artifacts/);
  t.throws(() => decodeRunnerArtifactsRequest({ instanceId: 'i', artifacts: [], order: [7] }), /order/);
});

t.test('instance view: bytes held and rate per placed node', async (t) => {
  const s = stateWith(['a', 'b', 'c'], { a: 4, b: 2 });
  t.same(instanceArtifacts(s, [ID], ['a', 'b', 'c']), [
    {
      id: ID,
      name: 'w',
      bytes: 400,
      nodes: [
        { node: 'a', haveBytes: 400, complete: true },
        { node: 'b', haveBytes: 200, complete: false, rateBps: 5000 },
        { node: 'c', haveBytes: 0, complete: false },
      ],
    },
  ]);
});

t.test(
  'the runner is spawned only once the gate resolves, with the paths in its environment; a gate failure fails it',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-gate-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'seen');
    const events: ManagerEvent[] = [];
    const spawned: string[] = [];
    let release: (env: Record<string, string>) => void = () => {};
    let refuse: (e: Error) => void = () => {};
    const asked: string[] = [];
    const manager = new RunnerManager({
      nodeId: 'a',
      dataDir: dir,
      allowExec: true,
      onEvent: (e) => events.push(e),
      onSpawn: (id) => spawned.push(id),
      deadlines: { gracefulMs: 1000, termMs: 500, killMs: 500 },
      awaitArtifacts: (instance) =>
        new Promise((resolve, reject) => {
          asked.push(instance.id);
          if (instance.id === 'ok') release = resolve;
          else refuse = reject;
        }),
    });
    t.teardown(() => manager.shutdown());
    const base = await loopbackInstance('ok', ['a'], {
      kind: 'exec',
      command: ['/bin/sh', '-c', `printf %s "$TORUS_ARTIFACT_W" > ${out}`],
    });
    manager.instanceCreated({ ...base, artifacts: [ID] });
    await waitFor(() => asked.includes('ok'), 5000);
    await new Promise((r) => setImmediate(r));
    t.same(spawned, [], 'no runner process while the artifacts are missing');
    release({ TORUS_ARTIFACT_W: '/store/w/files' });
    await waitFor(() => existsSync(out) && readFileSync(out, 'utf8') === '/store/w/files', 20_000);
    t.equal(spawned.length, 1, 'spawned after the gate');

    const bad = await loopbackInstance('bad', ['a'], { kind: 'exec', command: ['/bin/true'] });
    manager.instanceCreated({ ...bad, artifacts: [ID] });
    await waitFor(() => asked.includes('bad'), 5000);
    refuse(new Error('node a could not fetch artifact aaaa: no holder answered'));
    await waitFor(() => events.some((e) => e.type === 'InstanceFailed' && e.instanceId === 'bad'), 5000);
    t.match(
      events.find((e) => e.type === 'RunnerStatusChanged' && e.instanceId === 'bad'),
      { status: 'Failed', reason: /could not fetch artifact aaaa: no holder answered/ },
    );
    t.equal(spawned.length, 1, 'no process for the failed one');

    const none = new RunnerManager({ nodeId: 'a', dataDir: dir, allowExec: true, onEvent: (e) => events.push(e) });
    t.teardown(() => none.shutdown());
    none.instanceCreated({
      ...(await loopbackInstance('none', ['a'], { kind: 'exec', command: ['/bin/true'] })),
      artifacts: [ID],
    });
    t.match(
      events.find((e) => e.type === 'InstanceFailed' && e.instanceId === 'none'),
      { reason: /runs no artifact service/ },
    );
  },
);

t.test(
  'node gate: fetches a missing artifact as a chain link, answers ready with paths; a failed transfer fails with its reason',
  async (t) => {
    const { shared, nodes } = await startNodes(t, 3, { stallMs: 1500 });
    const [n0, n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]];
    const src = mkdtempSync(join(tmpdir(), 'torus-gate-src-'));
    t.teardown(() => rmSync(src, { recursive: true, force: true }));
    writeFileSync(join(src, 'weights.bin'), Buffer.alloc(300_000, 7));
    const added = await n0.service.store.add(src, { name: 'weights', chunkSize: 65536 });
    await n0.service.announce(added.id);
    const order = ['n1', 'n2', 'n0'];
    const gates = [n1, n2].map((n) => new RunnerArtifactGate(n.service, n.id));
    const ask = (i: number) => gates[i]!.prepare({ instanceId: 'job', artifacts: [added.id], order });
    const first = await ask(1);
    t.equal(first.state, 'waiting', 'n2 starts fetching');
    t.equal(n2.service.transfer(added.id)?.upstream, 'n1', 'n2 fetches from the node before it in ring order');
    await ask(0);
    t.equal(n1.service.transfer(added.id)?.upstream, 'n0', 'n1 from the holder before it (cyclic)');
    const ready = await until('n2 ready', async () => {
      const a = await ask(1);
      return a.state === 'ready' && a;
    });
    const path = (ready as { env: Record<string, string> }).env.TORUS_ARTIFACT_WEIGHTS!;
    t.same(readFileSync(join(path, 'weights.bin')), Buffer.alloc(300_000, 7), 'the path holds the verified bytes');
    t.equal((ready as { env: Record<string, string> }).env[`TORUS_ARTIFACT_${added.id.slice(0, 12)}`], path);

    // The only holder goes away: a new node's fetch fails, and the gate says why instead of waiting forever.
    const { nodes: lone } = await startNodes(t, 1, { stallMs: 1000 });
    const orphan = lone[0]!;
    const gate = new RunnerArtifactGate(orphan.service, orphan.id);
    const failed = await gate.prepare({ instanceId: 'job2', artifacts: [added.id], order: ['n0'] });
    t.match(failed, { state: 'failed', reason: /could not fetch artifact .*no other node holds/ });
    void shared;
  },
);
