// Shared builders for topology tests: valid events of every type.
import type { ClusterEvent, IndexedEvent, InstancePlan, WorkloadSpec } from '../../src/protocols/events.js';

export const plan2: InstancePlan = {
  id: 'inst-1', backend: 'ring', sharding: 'pipeline', nodes: ['a', 'b'],
  shards: [
    { node: 'a', rank: 0, worldSize: 2, startLayer: 0, endLayer: 6 },
    { node: 'b', rank: 1, worldSize: 2, startLayer: 6, endLayer: 12 },
  ],
  port: 50123,
  hostsByNode: { a: [{ ip: '0.0.0.0', port: 50123 }, { ip: '10.77.0.2', port: 50123 }], b: [{ ip: '10.77.0.1', port: 50123 }, { ip: '0.0.0.0', port: 50123 }] },
};
export const execWorkload: WorkloadSpec = { kind: 'exec', id: 'job', memoryBytes: 1000, layers: 12, command: '/bin/echo', args: ['hi'], env: { FOO: 'bar' } };
export const ringWorkload: WorkloadSpec = { kind: 'ring', id: 'ring-test', memoryBytes: 10, layers: 1 };

export const joined = (nodeId: string, incarnation = 1): ClusterEvent => ({
  type: 'NodeJoined', nodeId, name: `host-${nodeId}`, incarnation, apiPort: 52415,
  apiAddresses: [{ ip: '127.0.0.1', port: 52415 }], version: '0.1.0',
});
export const profile = (nodeId: string, ip: string, ramAvailable = 1000): ClusterEvent => ({
  type: 'NodeProfileUpdated', nodeId,
  interfaces: [{ name: 'eth0', ips: [ip], type: 'ethernet' }],
  memory: { ramTotal: 2000, ramAvailable, swapTotal: 0, swapAvailable: 0 },
});
export const linkUp = (source: string, sink: string, ip: string, linkType: 'ethernet' | 'thunderbolt' = 'ethernet'): ClusterEvent =>
  ({ type: 'LinkUp', source, sink, ip, linkType });
export const measured = (source: string, sink: string, ip: string, bandwidthBps = 1e9, rttMs = 0.2): ClusterEvent =>
  ({ type: 'LinkMeasured', source, sink, ip, rttMs, bandwidthBps, measuredAt: 1_700_000_000_000 });

/** One valid example of every event type (used by decode and apply tests). */
export const everyEvent: ClusterEvent[] = [
  joined('a'), joined('b'), profile('a', '10.77.0.1'), profile('b', '10.77.0.2'),
  linkUp('a', 'b', '10.77.0.2'), linkUp('b', 'a', '10.77.0.1'), measured('a', 'b', '10.77.0.2'),
  { type: 'InstanceCreated', instance: plan2, workload: execWorkload },
  { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'a', status: 'Connecting' },
  { type: 'TaskCreated', taskId: 't1', instanceId: 'inst-1', kind: 'exec', params: { n: 1 } },
  { type: 'TaskStatusChanged', taskId: 't1', status: 'complete', result: { exitCode: 0 } },
  { type: 'RunnerStatusChanged', instanceId: 'inst-1', nodeId: 'b', status: 'Failed', reason: 'exit', diagnostics: ['boom'], exitCode: 1 },
  { type: 'InstanceFailed', instanceId: 'inst-1', reason: 'runner b failed' },
  { type: 'InstanceNeedsReplacement', instanceId: 'inst-1', reason: 'operator asked' },
  { type: 'InstanceReplaced', instance: { ...plan2, nodes: ['b', 'a'], shards: [
    { node: 'b', rank: 0, worldSize: 2, startLayer: 0, endLayer: 6 }, { node: 'a', rank: 1, worldSize: 2, startLayer: 6, endLayer: 12 }],
  }, reason: 'node gone' },
  { type: 'LinkDown', source: 'a', sink: 'b', ip: '10.77.0.2', reason: 'probe timeout' },
  { type: 'InstanceDeleted', instanceId: 'inst-1', reason: 'user' },
  { type: 'NodeGone', nodeId: 'b', reason: 'heartbeat timeout' },
];

export function indexed(events: readonly ClusterEvent[], from = 1, term = 1): IndexedEvent[] {
  return events.map((event, i) => ({ index: from + i, term, event, at: 1_700_000_000_000 + i }));
}
