import t from 'tap';
import { ValidationError } from '../../../src/protocols/errors.js';
import {
  CLUSTER_EVENT_TYPES,
  decodeClusterEvent,
  decodeCommand,
  decodeIndexedEvent,
} from '../../../src/protocols/events.js';
import { everyEvent, execWorkload, plan2 } from '../../fixtures/topology/events.js';

type Assert = Pick<typeof t, 'ok' | 'match' | 'fail'>;
const rejects = (t: Assert, fn: () => unknown, path: RegExp) => {
  try {
    fn();
    t.fail('expected a ValidationError');
  } catch (error) {
    t.ok(error instanceof ValidationError, 'a ValidationError');
    t.match((error as Error).message, path);
  }
};

t.test('every event type round-trips through the decoder unchanged', async (t) => {
  const seen = new Set(everyEvent.map((e) => e.type));
  t.same(
    [...CLUSTER_EVENT_TYPES].filter((x) => !seen.has(x)),
    [],
    'the fixture covers every type',
  );
  for (const event of everyEvent) t.same(decodeClusterEvent(JSON.parse(JSON.stringify(event))), event, event.type);
  t.same(decodeIndexedEvent({ index: 1, term: 0, event: everyEvent[0] }), { index: 1, term: 0, event: everyEvent[0] });
});

t.test('unknown fields, types and bad values are refused with the path', async (t) => {
  rejects(t, () => decodeClusterEvent({ type: 'Nope' }), /event\.type/);
  rejects(t, () => decodeClusterEvent({ ...everyEvent[0], extra: 1 }), /event\.extra: unknown field/);
  rejects(t, () => decodeClusterEvent({ type: 'NodeGone', nodeId: 'a' }), /event\.reason: missing/);
  rejects(
    t,
    () => decodeClusterEvent({ type: 'LinkUp', source: 'a', sink: 'b', ip: 'not-ip', linkType: 'ethernet' }),
    /event\.ip: not an IP/,
  );
  rejects(t, () => decodeClusterEvent({ type: 'NodeGone', nodeId: '__proto__', reason: 'x' }), /event\.nodeId/);
  rejects(
    t,
    () =>
      decodeClusterEvent({
        type: 'InstanceCreated',
        instance: { ...plan2, nodes: ['a', 'a'] },
        workload: execWorkload,
      }),
    /event\.instance\.nodes\[1\]: "a" is given twice \(first at \[0\]\)/,
  );
  rejects(
    t,
    () =>
      decodeClusterEvent({
        type: 'InstanceCreated',
        instance: { ...plan2, hostsByNode: { c: [] } },
        workload: execWorkload,
      }),
    /hostsByNode\.c: not a node/,
  );
  rejects(
    t,
    () => decodeClusterEvent({ type: 'InstanceCreated', instance: plan2, workload: { ...execWorkload, kind: 'ring' } }),
    /workload\.command: unknown field/,
  );
  rejects(t, () => decodeIndexedEvent({ index: 0, term: 1, event: everyEvent[0] }), /indexed\.index: out of range/);
  rejects(
    t,
    () => decodeIndexedEvent({ index: 1.5, term: 1, event: everyEvent[0] }),
    /indexed\.index: expected an integer/,
  );
  rejects(
    t,
    () => decodeCommand({ type: 'PlaceInstance', workload: { kind: 'exec', id: 'w', memoryBytes: 1, layers: 2 } }),
    /command\.workload\.command: missing/,
  );
  rejects(t, () => decodeCommand({ type: 'NodeGone', nodeId: 'a', reason: 'x' }), /command\.type/);
  t.same(decodeCommand({ type: 'DeleteInstance', instanceId: 'i' }), { type: 'DeleteInstance', instanceId: 'i' });
});
