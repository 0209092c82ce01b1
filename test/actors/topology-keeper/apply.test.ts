import t from 'tap';
import { applyEvent, applyEvents, EventOrderError } from '../../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import type { ClusterEvent } from '../../../src/protocols/events.js';
import {
  everyEvent,
  execWorkload,
  indexed,
  joined,
  linkUp,
  measured,
  plan2,
  profile,
} from '../../fixtures/topology/events.js';
import { describeState, golden } from '../../fixtures/topology/transcript.js';

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

t.test('transcript: every event type, one step at a time (golden file)', async (t) => {
  let state: ClusterState = emptyState;
  const out: string[] = [];
  for (const entry of indexed(everyEvent)) {
    const before = stateDigest(state);
    state = applyEvent(deepFreeze(state), deepFreeze(entry)); // frozen inputs: any mutation would throw
    t.not(stateDigest(state), before, `#${entry.index} ${entry.event.type} changes the state`);
    out.push(`#${entry.index} ${entry.event.type}\n${describeState(state)}`);
  }
  const transcript = `${out.join('\n\n')}\n`;
  t.equal(transcript, golden('apply-every-event.txt', transcript));
});

const base = (): ClusterState =>
  applyEvents(
    emptyState,
    indexed([
      joined('a'),
      joined('b'),
      joined('c'),
      profile('a', '10.77.0.1'),
      profile('b', '10.77.0.2'),
      profile('c', '10.77.0.3'),
      linkUp('a', 'b', '10.77.0.2'),
      linkUp('b', 'a', '10.77.0.1'),
      linkUp('b', 'c', '10.77.0.3'),
      linkUp('c', 'b', '10.77.0.2'),
      linkUp('a', 'c', '10.77.0.3'),
      measured('a', 'b', '10.77.0.2', 5e9),
      { type: 'InstanceCreated', instance: plan2, workload: execWorkload },
      { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'Ready' },
    ]),
  );
const next = (s: ClusterState, ...events: ClusterEvent[]) => applyEvents(s, indexed(events, s.lastIndex + 1));

t.test('NodeGone removes the node and its links both ways, and marks its instances', async (t) => {
  const s = next(base(), { type: 'NodeGone', nodeId: 'b', reason: 'heartbeat timeout' });
  t.same(Object.keys(s.nodes).sort(), ['a', 'c']);
  t.same(
    s.links.map((l) => `${l.source}>${l.sink}`),
    ['a>c'],
  );
  const inst = s.instances['inst-1']!;
  t.equal(inst.status, 'needs-replacement');
  t.equal(inst.reason, 'node b left: heartbeat timeout');
  t.same(inst.runners, {}, "the gone node's runner record is dropped");
  t.equal(
    next(s, { type: 'NodeGone', nodeId: 'b', reason: 'again' }).instances['inst-1']!.reason,
    inst.reason,
    'a second NodeGone changes nothing',
  );
});

t.test('a restarted node (new incarnation) loses its stale links and runner records, keeps the rest', async (t) => {
  const s0 = base();
  const s = next(s0, joined('b', 2));
  t.equal(s.nodes.b!.incarnation, 2);
  t.same(
    s.links.map((l) => `${l.source}>${l.sink}`),
    ['a>c'],
    'every link touching b is gone',
  );
  t.same(s.instances['inst-1']!.runners, {});
  t.equal(s.instances['inst-1']!.status, 'active', 'the instance is not re-placed: b is back');
  t.ok(s.nodes.b!.profile, 'profile kept until the new one arrives');
  const relinked = next(s, linkUp('a', 'b', '10.77.0.9'), {
    ...linkUp('b', 'a', '10.77.0.1'),
    sourceIncarnation: 2,
  } as ClusterEvent);
  t.same(
    relinked.links.map((l) => `${l.source}>${l.sink}@${l.ip}`),
    ['a>b@10.77.0.9', 'a>c@10.77.0.3', 'b>a@10.77.0.1'],
  );
  const late = next(s, { ...linkUp('b', 'c', '10.77.0.3'), sourceIncarnation: 1 } as ClusterEvent);
  t.equal(late.links.length, s.links.length, 'a late link report from the old incarnation is void');
  t.equal(next(s, joined('b', 1)).nodes.b!.incarnation, 2, 'a late join of the old incarnation is void');
  t.equal(next(s0, joined('b', 1)).links.length, s0.links.length, 'the same incarnation re-joining keeps its links');
});

t.test('links: multigraph per address, measurements kept on re-LinkUp, LinkDown removes one edge', async (t) => {
  let s = next(base(), linkUp('a', 'b', '10.77.1.2', 'thunderbolt'), measured('a', 'b', '10.77.1.2', 4e10, 0.05));
  t.same(
    s.links.filter((l) => l.source === 'a' && l.sink === 'b').map((l) => [l.ip, l.type, l.bandwidthBps]),
    [
      ['10.77.0.2', 'ethernet', 5e9],
      ['10.77.1.2', 'thunderbolt', 4e10],
    ],
  );
  s = next(s, linkUp('a', 'b', '10.77.0.2', 'thunderbolt'));
  t.match(
    s.links.find((l) => l.ip === '10.77.0.2' && l.source === 'a'),
    { type: 'thunderbolt', bandwidthBps: 5e9 },
  );
  s = next(s, { type: 'LinkDown', source: 'a', sink: 'b', ip: '10.77.1.2', reason: 'cut' });
  t.equal(s.links.filter((l) => l.source === 'a' && l.sink === 'b').length, 1);
  const unknown = next(
    s,
    linkUp('a', 'zz', '10.77.0.9'),
    measured('a', 'c', '10.77.9.9'),
    linkUp('a', 'a', '10.77.0.1'),
  );
  t.same(unknown.links, s.links, 'links to unknown nodes, measurements of absent edges and self-loops change nothing');
});

t.test('instances, runners and tasks', async (t) => {
  let s = next(base(), {
    type: 'InstanceCreated',
    instance: { ...plan2, nodes: ['c', 'b'], shards: [] } as never,
    workload: execWorkload,
  });
  t.equal(s.instances['inst-1']!.plan.nodes.join(), 'a,b', 'creating an existing id is idempotent (first wins)');
  s = next(s, { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'c', status: 'Ready' });
  t.notOk(s.instances['inst-1']!.runners.c, 'runner status of a node outside the plan is ignored');
  s = next(
    s,
    { type: 'TaskCreated', taskId: 't1', instanceId: 'inst-1', kind: 'exec' },
    { type: 'TaskCreated', taskId: 't2', instanceId: 'nope', kind: 'exec' },
  );
  t.same(Object.keys(s.tasks), ['t1'], 'a task for an unknown instance is not recorded');
  s = next(
    s,
    { type: 'TaskStatusChanged', taskId: 't1', status: 'failed', error: 'exit 1' },
    { type: 'TaskStatusChanged', taskId: 't1', status: 'running' },
  );
  t.same([s.tasks.t1!.status, s.tasks.t1!.error], ['running', undefined], 'error describes the latest status only');
  s = next(s, { type: 'InstanceDeleted', instanceId: 'inst-1', reason: 'user' });
  t.same([s.instances, s.tasks], [{}, {}], 'deleting an instance removes it and its tasks');
});

t.test("a rank's exit stays on its runner record while it shuts down; a new attempt starts without it", async (t) => {
  let s = next(base(), {
    type: 'RunnerStatusChanged',
    instanceId: 'inst-1',
    nodeId: 'b',
    status: 'Ready',
    exitCode: 0,
    reason: 'command exited with code 0',
  });
  s = next(s, { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'ShuttingDown' });
  t.equal(s.instances['inst-1']!.runners.b!.exitCode, 0, 'ShuttingDown keeps exit code 0');
  s = next(s, { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'Shutdown' });
  t.match(s.instances['inst-1']!.runners.b, { status: 'Shutdown', exitCode: 0 }, 'so does Shutdown');
  s = next(s, { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'Failed', signal: 'SIGKILL' });
  s = next(s, { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'Shutdown' });
  t.match(
    s.instances['inst-1']!.runners.b,
    { status: 'Shutdown', signal: 'SIGKILL', exitCode: undefined },
    'a signal is kept the same way, alone',
  );
  s = next(s, { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'Idle' });
  t.same(
    [s.instances['inst-1']!.runners.b!.exitCode, s.instances['inst-1']!.runners.b!.signal],
    [undefined, undefined],
    'a new attempt (Idle) starts clean',
  );
});

t.test('ids that are Object.prototype keys are ordinary ids', async (t) => {
  let s = next(emptyState, joined('constructor'), joined('toString'), linkUp('constructor', 'toString', '10.77.0.2'));
  t.same(Object.keys(s.nodes).sort(), ['constructor', 'toString']);
  t.equal(s.links.length, 1);
  s = next(s, { type: 'NodeGone', nodeId: 'hasOwnProperty', reason: 'x' });
  t.equal(Object.keys(s.nodes).length, 2);
});

t.test('index and term checks throw EventOrderError; the state is untouched', async (t) => {
  const s = base();
  const e = joined('d');
  const check = (index: number, term: number, problem: string, code: string) => {
    try {
      applyEvent(s, { index, term, event: e });
      t.fail('should throw');
    } catch (error) {
      t.ok(error instanceof EventOrderError);
      t.match(error, { problem, code, details: { expectedIndex: s.lastIndex + 1, index } });
    }
  };
  check(s.lastIndex + 2, 1, 'gap', 'TORUS_EVENT_OUT_OF_ORDER');
  check(s.lastIndex, 1, 'stale', 'TORUS_EVENT_STALE');
  check(1, 1, 'stale', 'TORUS_EVENT_STALE');
  const s2 = applyEvent(s, { index: s.lastIndex + 1, term: 3, event: e });
  t.equal(s2.lastTerm, 3);
  try {
    applyEvent(s2, { index: s2.lastIndex + 1, term: 2, event: joined('e') });
    t.fail('should throw');
  } catch (error) {
    t.match(error, { problem: 'term', code: 'TORUS_EVENT_STALE' });
  }
  t.equal(s.lastIndex, 14, 'the input state is unchanged');
});
