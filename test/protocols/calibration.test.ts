// A calibration's output is hostile input (src/protocols/calibration.ts): exactly one result line, strictly checked,
// or a refusal naming why; the event that records it is bounded, and the state keeps it per node and framework.
import t from 'tap';
import { applyEvents } from '../../src/actors/topology-keeper/apply.js';
import { emptyState } from '../../src/actors/topology-keeper/state.js';
import { stateDigest } from '../../src/actors/topology-keeper/digest.js';
import { decodeSnapshot, encodeSnapshot } from '../../src/actors/topology-keeper/snapshot.js';
import {
  CalibrationOutputError,
  calibrationEvent,
  MAX_FRAMEWORKS_PER_NODE,
  parseCalibrationOutput,
} from '../../src/protocols/calibration.js';
import { decodeClusterEvent, type ClusterEvent } from '../../src/protocols/events.js';
import { indexed, joined } from '../fixtures/topology/events.js';

const line = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({
    torusCalibration: 1,
    framework: 'torch',
    gflops: 68.5,
    memoryBandwidthGBps: 8.7,
    layerOverheadMs: 0.9,
    ...over,
  });

t.test('one result line among the command’s own lines is read', async (t) => {
  const out = `loading torch\n${line()}\ndone\n`;
  t.same(parseCalibrationOutput(out, 'torch'), JSON.parse(line()));
  t.same(parseCalibrationOutput(Buffer.from(out), 'torch').gflops, 68.5);
  t.same(parseCalibrationOutput(line({ layerOverheadMs: 0 }), 'torch').layerOverheadMs, 0, 'no overhead is a figure');
});

t.test('hostile output is refused with a reason', async (t) => {
  const cases: [string, string | Buffer, RegExp][] = [
    ['NaN', line().replace('68.5', 'NaN'), /not JSON/],
    ['Infinity', line().replace('68.5', 'Infinity'), /not JSON/],
    ['negative', line({ gflops: -1 }), /gflops/],
    ['zero bandwidth', line({ memoryBandwidthGBps: 0 }), /memoryBandwidthGBps/],
    ['huge', line({ gflops: 1e300 }), /gflops/],
    ['negative overhead', line({ layerOverheadMs: -0.1 }), /layerOverheadMs/],
    ['a string', line({ gflops: '68' }), /gflops/],
    [
      'missing',
      JSON.stringify({ torusCalibration: 1, framework: 'torch', gflops: 1, layerOverheadMs: 1 }),
      /memoryBandwidthGBps/,
    ],
    ['an extra field', line({ note: 'x' }), /note/],
    ['another version', line({ torusCalibration: 2 }), /torusCalibration/],
    ['a bad framework name', line({ framework: '__proto__' }), /framework/],
    ['another framework', line({ framework: 'jax' }), /names framework jax, not torch/],
    ['two results', `${line()}\n${line({ gflops: 2 })}\n`, /2 result lines/],
    ['no result', 'torch 1.13\nall good\n', /no result line/],
    ['empty', '', /no result line/],
    ['not JSON', 'x "torusCalibration" y', /not JSON/],
    ['an array', `[${line()}]`, /line/],
    ['a long line', `${line().slice(0, -1)},"pad":"${'x'.repeat(5000)}"}`, /more than 4096/],
    ['10 MB', Buffer.alloc(10_000_000, 'x'), /more than 1048576/],
  ];
  for (const [what, out, why] of cases) {
    t.throws(() => parseCalibrationOutput(out, 'torch'), CalibrationOutputError, what);
    t.throws(() => parseCalibrationOutput(out, 'torch'), why, what);
  }
});

const recorded = (over: Record<string, unknown> = {}): ClusterEvent =>
  decodeClusterEvent({
    type: 'CalibrationRecorded',
    nodeId: 'a',
    framework: 'torch',
    gflops: 68.5,
    memoryBandwidthGBps: 8.7,
    layerOverheadMs: 0.9,
    measuredAt: 1_700_000_000_000,
    ...over,
  });

t.test('the hop overhead is optional, bounded, and carried into the event', async (t) => {
  const withHop = parseCalibrationOutput(line({ hopOverheadMs: 1.25 }), 'torch');
  t.equal(withHop.hopOverheadMs, 1.25);
  t.equal(calibrationEvent('a', withHop, 5).hopOverheadMs, 1.25);
  t.equal(parseCalibrationOutput(line({ hopOverheadMs: 0 }), 'torch').hopOverheadMs, 0, 'no overhead is a figure');
  // an older calibration's line has none, and its event none either (not a 0 it did not measure)
  const older = parseCalibrationOutput(line(), 'torch');
  t.notOk('hopOverheadMs' in older);
  t.notOk('hopOverheadMs' in calibrationEvent('a', older, 5));
  const hostile: [string, string][] = [
    ['negative', line({ hopOverheadMs: -0.01 })],
    ['over a second', line({ hopOverheadMs: 1000.5 })],
    ['huge', line({ hopOverheadMs: 1e300 })],
    ['a string', line({ hopOverheadMs: '1' })],
    ['null', line({ hopOverheadMs: null })],
    ['NaN', line({ hopOverheadMs: 1 }).replace('"hopOverheadMs":1', '"hopOverheadMs":NaN')],
    ['an object', line({ hopOverheadMs: { ms: 1 } })],
  ];
  for (const [what, out] of hostile) {
    t.throws(() => parseCalibrationOutput(out, 'torch'), CalibrationOutputError, what);
    if (what !== 'NaN') t.throws(() => parseCalibrationOutput(out, 'torch'), /hopOverheadMs/, what);
  }
  t.throws(() => recorded({ hopOverheadMs: -1 }), /hopOverheadMs/);
  t.throws(() => recorded({ hopOverheadMs: 2000 }), /hopOverheadMs/);
});

t.test('the event is checked like the line', async (t) => {
  t.throws(() => recorded({ gflops: -1 }), /gflops/);
  t.throws(() => recorded({ gflops: Number.NaN }), /gflops/);
  t.throws(() => recorded({ framework: 'Torch' }), /framework/);
  t.throws(() => recorded({ extra: 1 }), /extra/);
});

t.test('the state keeps figures per node and framework, bounded; a node that leaves keeps none', async (t) => {
  const base = applyEvents(emptyState, indexed([joined('a')]));
  const withTorch = applyEvents(base, indexed([recorded()], 2));
  t.same(withTorch.calibrations, {
    a: { torch: { gflops: 68.5, memoryBandwidthGBps: 8.7, layerOverheadMs: 0.9, measuredAt: 1_700_000_000_000 } },
  });
  // the snapshot schema admits it (a snapshot round-trips)
  t.same(
    decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(withTorch)))).state.calibrations,
    withTorch.calibrations,
  );
  // with a hop overhead: stored, and the snapshot admits it
  const withHop = applyEvents(base, indexed([recorded({ hopOverheadMs: 1.5 })], 2));
  t.equal(withHop.calibrations?.a?.torch?.hopOverheadMs, 1.5);
  t.same(decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(withHop)))).state.calibrations, withHop.calibrations);
  // a later run replaces the earlier one
  const again = applyEvents(withTorch, indexed([recorded({ gflops: 70, measuredAt: 1_700_000_001_000 })], 3));
  t.equal(again.calibrations?.a?.torch?.gflops, 70);
  // an unknown node changes nothing
  const unknown = applyEvents(base, indexed([recorded({ nodeId: 'zz' })], 2));
  t.equal(unknown.calibrations, undefined);
  t.equal(stateDigest({ ...unknown, lastIndex: base.lastIndex, lastTerm: base.lastTerm }), stateDigest(base));
  // at most MAX_FRAMEWORKS_PER_NODE frameworks a node
  const many = Array.from({ length: MAX_FRAMEWORKS_PER_NODE + 1 }, (_, i) => recorded({ framework: `fw${i}` }));
  const full = applyEvents(base, indexed(many, 2));
  t.equal(Object.keys(full.calibrations?.a ?? {}).length, MAX_FRAMEWORKS_PER_NODE);
  t.notOk(full.calibrations?.a?.[`fw${MAX_FRAMEWORKS_PER_NODE}`]);
  const gone = applyEvents(withTorch, indexed([{ type: 'NodeGone', nodeId: 'a', reason: 'removed' }], 3));
  t.equal(gone.calibrations, undefined, 'the key goes with the last node');
});
