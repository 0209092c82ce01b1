import t from 'tap';
import {
  decodeDownFrame,
  decodeUpFrame,
  encodeFrame,
  FrameSplitter,
  MAX_RUNNER_FRAME_BYTES,
  type DownFrame,
} from '../../../../src/protocols/runner.js';
import { decodeHostfile, encodeHostfile, parseHostPort } from '../../../../src/protocols/hostfile.js';
import { execEnv, ringHosts } from '../../../../src/actors/runner-supervisor/supervisor/exec-env.js';
import type { RunnerInstance } from '../../../../src/protocols/runner-instance.js';
import { ValidationError } from '../../../../src/protocols/errors.js';

const start: DownFrame = {
  type: 'start',
  v: 1,
  config: {
    runnerId: 'i1@a',
    instanceId: 'i1',
    nodeId: 'a',
    rank: 0,
    worldSize: 2,
    layerStart: 0,
    layerEnd: 6,
    workload: { kind: 'exec', command: ['sh', '-c', 'env'] },
    hosts: ['0.0.0.0:5000', '10.77.0.2:5000'],
    hostfilePath: '/tmp/h.json',
    env: { TORUS_RANK: '0' },
  },
};

t.test('frames round-trip through the splitter, split at every byte', async (t) => {
  const frames: DownFrame[] = [
    start,
    { type: 'connect', taskId: 't1' },
    { type: 'task', taskId: 't2', op: 'exec', params: { n: 1, a: [1, 'x'] } },
    { type: 'cancel', taskId: 't2' },
  ];
  const bytes = Buffer.concat(frames.map(encodeFrame));
  const splitter = new FrameSplitter();
  const out: unknown[] = [];
  for (let i = 0; i < bytes.length; i += 7) out.push(...splitter.push(bytes.subarray(i, i + 7)));
  t.same(out.map(decodeDownFrame), frames);
  t.same(decodeUpFrame({ type: 'status', status: { state: 'Loading', layersLoaded: 1, totalLayers: 3 } }), {
    type: 'status',
    status: { state: 'Loading', layersLoaded: 1, totalLayers: 3 },
  });
  t.same(
    decodeUpFrame({ type: 'task-status', taskId: 'x', status: 'complete', result: { ms: 3 } }).type,
    'task-status',
  );
});

t.test('hostile frames are ValidationErrors, never crashes', async (t) => {
  const bad: unknown[] = [
    null,
    1,
    'x',
    [],
    {},
    { type: 'nope' },
    { type: 'connect' },
    { type: 'connect', taskId: '' },
    { type: 'connect', taskId: 't', extra: 1 },
    { type: 'start', v: 2, config: start.type === 'start' ? start.config : null },
    { type: 'task', taskId: 't', op: 'x', params: [] },
    { type: 'task', taskId: 't', op: 'x', params: { d: new Date() } },
    { type: 'start', v: 1, config: { ...(start.type === 'start' ? start.config : {}), rank: 5 } },
    { type: 'start', v: 1, config: { ...(start.type === 'start' ? start.config : {}), env: { A: 1 } } },
    {
      type: 'start',
      v: 1,
      config: { ...(start.type === 'start' ? start.config : {}), workload: { kind: 'exec', command: [] } },
    },
  ];
  for (const v of bad) t.throws(() => decodeDownFrame(v), ValidationError, JSON.stringify(v) ?? String(v));
  for (const v of [
    { type: 'status', status: { state: 'Weird' } },
    { type: 'status', status: { state: 'Failed' } },
    { type: 'ack' },
    { type: 'task-status', taskId: 't', status: 'done' },
    { type: 'diagnostic', level: 'x', message: '' },
  ]) {
    t.throws(() => decodeUpFrame(v), ValidationError);
  }
  const huge = Buffer.alloc(4);
  huge.writeUInt32BE(MAX_RUNNER_FRAME_BYTES + 1, 0);
  t.throws(() => new FrameSplitter().push(huge), ValidationError, 'oversized length');
  const garbage = Buffer.from([0, 0, 0, 2, 0xc1, 0xc1]);
  t.throws(() => new FrameSplitter().push(garbage), ValidationError, 'undecodable body');
  // random bytes: either frames that fail validation or a ValidationError, nothing else
  for (let i = 0; i < 300; i++) {
    const len = 1 + Math.floor(Math.random() * 40);
    const b = Buffer.alloc(4 + len);
    b.writeUInt32BE(len, 0);
    for (let j = 4; j < b.length; j++) b[j] = Math.floor(Math.random() * 256);
    try {
      for (const f of new FrameSplitter().push(b)) decodeDownFrame(f);
    } catch (err) {
      if (!(err instanceof ValidationError)) t.fail(`non-validation error: ${String(err)}`);
    }
  }
});

t.test('hostfile format', async (t) => {
  const text = encodeHostfile([
    { ip: '0.0.0.0', port: 5000 },
    { ip: '10.77.0.2', port: 5000 },
    { ip: 'fe80::1', port: 7 },
  ]);
  t.equal(
    text,
    '[["0.0.0.0:5000"],["10.77.0.2:5000"],["[fe80::1]:7"]]\n',
    "mlx.launch's shape: one array of addresses per rank",
  );
  t.same(decodeHostfile(text), [
    { ip: '0.0.0.0', port: 5000 },
    { ip: '10.77.0.2', port: 5000 },
    { ip: 'fe80::1', port: 7 },
  ]);
  t.same(
    decodeHostfile('["1.2.3.4:5","1.2.3.5:5"]'),
    [
      { ip: '1.2.3.4', port: 5 },
      { ip: '1.2.3.5', port: 5 },
    ],
    'bare strings are read too',
  );
  for (const bad of [
    '',
    '{}',
    '[]',
    '[1]',
    '[[]]',
    '[[1]]',
    '["x:1"]',
    '["1.2.3.4:99999"]',
    '["1.2.3.4"]',
    '["256.1.1.1:1"]',
  ]) {
    t.throws(() => decodeHostfile(bad), ValidationError, bad);
  }
  t.same(parseHostPort('198.51.100.1:0'), { ip: '198.51.100.1', port: 0 });
});

t.test('execEnv: rank, world, hostfile, coordinator, torch variables, layers', async (t) => {
  const inst: RunnerInstance = {
    id: 'i1',
    backend: 'ring',
    sharding: 'pipeline',
    nodes: ['a', 'b', 'c'],
    port: 52000,
    shards: [
      { node: 'a', rank: 0, worldSize: 3, startLayer: 0, endLayer: 3 },
      { node: 'b', rank: 1, worldSize: 3, startLayer: 3, endLayer: 6 },
      { node: 'c', rank: 2, worldSize: 3, startLayer: 6, endLayer: 12 },
    ],
    hostsByNode: {
      a: [
        { ip: '0.0.0.0', port: 52000 },
        { ip: '10.77.0.2', port: 52000 },
        { ip: '10.77.0.3', port: 52000 },
      ],
      b: [
        { ip: '10.77.0.1', port: 52000 },
        { ip: '0.0.0.0', port: 52000 },
        { ip: '10.77.0.3', port: 52000 },
      ],
      c: [
        { ip: '10.77.0.1', port: 52000 },
        { ip: '10.77.0.2', port: 52000 },
        { ip: '0.0.0.0', port: 52000 },
      ],
    },
    workload: { kind: 'exec', command: ['true'] },
  };
  const b = execEnv(inst, 'b', { hostfilePath: '/d/h.json' });
  t.match(b, {
    TORUS_RANK: '1',
    TORUS_WORLD_SIZE: '3',
    TORUS_HOSTFILE: '/d/h.json',
    MLX_RANK: '1',
    MLX_HOSTFILE: '/d/h.json',
    MASTER_ADDR: '10.77.0.1',
    MASTER_PORT: '52001',
    RANK: '1',
    WORLD_SIZE: '3',
    TORUS_LAYER_START: '3',
    TORUS_LAYER_END: '6',
    MLX_JACCL_COORDINATOR: '10.77.0.1:52001',
  });
  t.match(
    execEnv(inst, 'a', { hostfilePath: '/x' }),
    { MASTER_ADDR: '10.77.0.1', MLX_JACCL_COORDINATOR: '0.0.0.0:52001', RANK: '0' },
    'rank 0 gets its own planned address, never loopback',
  );
  t.match(
    execEnv(inst, 'c', {
      hostfilePath: '/x',
      ifaceOf: (ip) => (ip === '10.77.0.3' ? 'lan0' : undefined),
      restartCount: 2,
      maxRestarts: 3,
    }),
    {
      GLOO_SOCKET_IFNAME: 'lan0',
      NCCL_SOCKET_IFNAME: 'lan0',
      TP_SOCKET_IFNAME: 'lan0',
      LOCAL_RANK: '0',
      LOCAL_WORLD_SIZE: '1',
      GROUP_RANK: '2',
      GROUP_WORLD_SIZE: '3',
      ROLE_RANK: '2',
      ROLE_WORLD_SIZE: '3',
      TORCHELASTIC_RUN_ID: 'torus-i1',
      TORCHELASTIC_RESTART_COUNT: '2',
      TORCHELASTIC_MAX_RESTARTS: '3',
    },
    "torchrun's variables; the interface of this node's planned address",
  );
  t.notOk('GLOO_SOCKET_IFNAME' in execEnv(inst, 'c', { hostfilePath: '/x' }), 'no interface known: not set');
  const single: RunnerInstance = {
    ...inst,
    nodes: ['a'],
    shards: [{ node: 'a', rank: 0, worldSize: 1, startLayer: 0, endLayer: 12 }],
    hostsByNode: { a: [{ ip: '0.0.0.0', port: 52000 }] },
  };
  t.match(
    execEnv(single, 'a', { hostfilePath: '/x' }),
    { MASTER_ADDR: '127.0.0.1' },
    'a single rank talks to itself on loopback',
  );
  t.same(ringHosts(inst, 'c'), ['10.77.0.1:52000', '10.77.0.2:52000', '0.0.0.0:52000']);
  const jaccl: RunnerInstance = {
    ...inst,
    backend: 'jaccl',
    hostsByNode: undefined,
    jacclCoordinators: { a: '0.0.0.0:6000', b: '10.77.1.1:6000', c: '10.77.1.1:6000' },
  } as RunnerInstance;
  t.match(execEnv(jaccl, 'c', { hostfilePath: '/x' }), {
    MASTER_ADDR: '10.77.1.1',
    MASTER_PORT: '6000',
    MLX_JACCL_COORDINATOR: '10.77.1.1:6000',
  });
  t.match(
    execEnv(jaccl, 'a', { hostfilePath: '/x' }),
    { MASTER_ADDR: '10.77.1.1', MLX_JACCL_COORDINATOR: '0.0.0.0:6000' },
    'jaccl rank 0: the address the others dial',
  );
  t.same(ringHosts(jaccl, 'b'), ['198.51.100.1:0', '0.0.0.0:52000', '198.51.100.1:0']);
  t.throws(() => execEnv(inst, 'zz', { hostfilePath: '/x' }));
});
