import t, { type Test } from 'tap';
import { type TorusError, ValidationError } from '../../../../src/protocols/errors.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { GB, makeState, request } from '../../../fixtures/placement/build-state.js';

const fails = (t: Test, fn: () => unknown, path: RegExp, label: string): void => {
  try {
    fn();
    t.fail(`${label}: accepted`);
  } catch (error) {
    t.ok(error instanceof ValidationError, `${label}: a ValidationError`);
    t.match((error as TorusError).message, path, `${label}: names the path`);
  }
};

t.test('state decoder: names the JSON path of the first problem', async (t) => {
  const ok = makeState([
    { id: 'a', mem: GB },
    { id: 'b', mem: GB },
  ]);
  t.equal(decodePlacementInput(ok).nodes.length, 2);
  fails(t, () => decodePlacementInput(null), /state: expected an object, got null/, 'null');
  fails(
    t,
    () => decodePlacementInput({ nodes: 'x' }),
    /state\.nodes: expected an array, got string/,
    'nodes not an array',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a', memory: { ramAvailable: -1, ramTotal: 1 } }] }),
    /state\.nodes\[0\]\.memory\.ramAvailable: must be >= 0/,
    'negative memory',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a', memory: { ramAvaliable: 1, ramTotal: 1 } }] }),
    /memory\.ramAvailable: is required/,
    'typo',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a' }, { id: 'a' }] }),
    /state\.nodes\[1\]\.id: duplicate/,
    'duplicate id',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a', interfaces: [{ name: 'en0', ip: '10.77.0.1', type: 'fibre' }] }] }),
    /interfaces\[0\]\.type: expected one of thunderbolt/,
    'bad type',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a', cached: { w: 2 } }] }),
    /cached\.w: must be <= 1/,
    'fraction',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a', cached: null }] }),
    /cached: expected an object, got null/,
    'cached null',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a' }], links: [{ source: 'a', sink: 'z', ip: '10.77.0.1' }] }),
    /links\[0\]\.sink: unknown node "z"/,
    'unknown sink',
  );
  fails(
    t,
    () => decodePlacementInput({ nodes: [{ id: 'a' }, { id: 'b' }], links: [{ source: 'a', sink: 'b' }] }),
    /links\[0\]\.ip: is required/,
    'no ip',
  );
  fails(
    t,
    () =>
      decodePlacementInput({
        nodes: [{ id: 'a' }, { id: 'b' }],
        links: [{ source: 'a', sink: 'b', ip: '1', bandwidthBps: 'fast' }],
      }),
    /bandwidthBps: expected a finite number, got string/,
    'bandwidth',
  );
  fails(
    t,
    () =>
      decodePlacementInput({
        nodes: [{ id: 'a' }, { id: 'b' }],
        links: [{ source: 'a', sink: 'b', ip: '1', rdma: { sourceIface: 'x', sinkIface: 'y' } }],
      }),
    /links\[0\]\.ip: an rdma link/,
    'mixed link',
  );
  const rd = decodePlacementInput({
    nodes: [{ id: 'a' }, { id: 'b' }],
    links: [{ source: 'a', sink: 'b', rdma: { sourceIface: 'x', sinkIface: 'y' } }],
  });
  t.same(rd.links[0], { kind: 'rdma', source: 'a', sink: 'b', sourceIface: 'x', sinkIface: 'y' });
  fails(t, () => decodePlacementInput({ nodes: 1 }, 'config'), /^config state/, 'config flavour');
});

t.test('request decoder', async (t) => {
  const r = decodePlacementRequest(request({ requiredNodes: ['a', 'a'] }));
  t.same(r.requiredNodes, ['a']);
  t.equal(r.minNodes, 1);
  t.equal(r.workload.supportsTensor, false);
  fails(
    t,
    () => decodePlacementRequest(request({ sharding: 'data' })),
    /request\.sharding: expected one of pipeline, tensor/,
    'sharding',
  );
  fails(t, () => decodePlacementRequest(request({ backend: 'nccl' })), /request\.backend/, 'backend');
  fails(t, () => decodePlacementRequest(request({ minNodes: 0 })), /request\.minNodes: must be >= 1/, 'minNodes');
  fails(
    t,
    () => decodePlacementRequest(request({}, { layers: 1.5 })),
    /request\.workload\.layers: expected an integer/,
    'layers',
  );
  fails(
    t,
    () => decodePlacementRequest(request({}, { memoryBytes: undefined })),
    /request\.workload\.memoryBytes: expected a finite number/,
    'memory',
  );
  fails(t, () => decodePlacementRequest({ ...request(), extra: 1 }), /request\.extra: is not a known field/, 'extra');
  fails(t, () => decodePlacementRequest(request({ requiredNodes: [1] })), /requiredNodes\[0\]/, 'required');
});
