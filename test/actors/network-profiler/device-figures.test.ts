import t from 'tap';
import { deviceInfo } from '../../../src/actors/network-profiler/device-figures.js';
import { deviceChanged } from '../../../src/actors/network-profiler/links.js';
import { applyEvent } from '../../../src/actors/topology-keeper/apply.js';
import { toPlacementState } from '../../../src/actors/topology-keeper/placement-state.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import { decodeClusterEvent } from '../../../src/protocols/events.js';

const measured = {
  memoryBandwidthGBps: 21.5,
  gflops: 3.2,
  kernel: 'wasm' as const,
  computeKernel: 'wasm' as const,
  elapsedMs: 1500,
};

t.test('declared figures win over measured ones and say so', async (t) => {
  t.same(deviceInfo(undefined, measured, 7), {
    memoryBandwidthGBps: 21.5,
    memoryBandwidthSource: 'measured',
    gflops: 3.2,
    gflopsSource: 'measured',
    measuredAt: 7,
  });
  t.same(deviceInfo({ gflops: 27000 }, measured, 7), {
    memoryBandwidthGBps: 21.5,
    memoryBandwidthSource: 'measured',
    gflops: 27000,
    gflopsSource: 'declared',
    measuredAt: 7,
  });
  t.same(deviceInfo({ gflops: 10 }, undefined, undefined), { gflops: 10, gflopsSource: 'declared' });
  t.equal(deviceInfo(undefined, { ...measured, gflops: 0, memoryBandwidthGBps: Number.NaN }, 1), undefined);
});

t.test('the profile event carries the figures into the replicated state and the planner state', async (t) => {
  const device = deviceInfo(undefined, measured, 7);
  let state = emptyState;
  let index = 0;
  const apply = (e: unknown) => {
    state = applyEvent(state, { index: ++index, term: 1, event: decodeClusterEvent(e) });
  };
  apply({ type: 'NodeJoined', nodeId: 'a', name: 'a', incarnation: 1, apiPort: 1, apiAddresses: [], version: '1' });
  apply({ type: 'NodeProfileUpdated', nodeId: 'a', interfaces: [], memory: { ramTotal: 10, ramAvailable: 5 }, device });
  t.same(state.nodes.a?.profile?.device, device);
  t.same(toPlacementState(state).nodes[0]?.device, { memoryBandwidthGBps: 21.5, gflops: 3.2 });
  t.throws(() =>
    decodeClusterEvent({
      type: 'NodeProfileUpdated',
      nodeId: 'a',
      interfaces: [],
      memory: { ramTotal: 10, ramAvailable: 5 },
      device: { gflops: -1 },
    }),
  );
});

t.test('a device is unchanged whatever its key order; any figure or source moving is a change', async (t) => {
  const a = { memoryBandwidthGBps: 20, memoryBandwidthSource: 'measured' as const, gflops: 3, measuredAt: 1 };
  const reordered = { gflops: 3, measuredAt: 1, memoryBandwidthSource: 'measured' as const, memoryBandwidthGBps: 20 };
  t.notOk(deviceChanged(a, reordered));
  t.ok(deviceChanged(a, { ...a, gflops: 4 }));
  t.ok(deviceChanged(a, { ...a, gflopsSource: 'declared' }));
  t.ok(deviceChanged(undefined, a));
  t.notOk(deviceChanged(undefined, undefined));
});
