import t from 'tap';
import { requestCodecs, requestSchemas } from '../../src/api/request-schemas.js';
import {
  CLUSTER_EVENT_TYPES,
  COMMAND_TYPES,
  decodeClusterEvent,
  decodeCommand,
  decodeIndexedEvent,
  EventSchemas,
  IndexedEvent,
} from '../../src/protocols/events.js';
import {
  CancelTask,
  CreateInstance,
  DeleteInstance,
  PlaceInstance,
  ReplaceInstance,
  SubmitTask,
} from '../../src/protocols/commands.js';
import { everyEvent, execWorkload, plan2, ringWorkload } from '../fixtures/topology/events.js';
import { decodePeerFrame, PeerFrameSchemas } from '../../src/protocols/peer-frames.js';
import {
  decodeDownFrame,
  decodeStartConfig,
  decodeUpFrame,
  DownFrameSchemas,
  RunnerStartConfig,
  UpFrameSchemas,
} from '../../src/protocols/runner.js';
import { roundTrip, type Kind } from './fixtures/round-trip.js';
import { actorTables } from './fixtures/actor-rows.js';
import { STATE_KINDS, stateRows } from './fixtures/state-rows.js';
import {
  decodeIdentity,
  decodeNodeIdResponse,
  decodeSinkReport,
  ProbeAnswers,
  ProbeIdentity,
  SinkReport,
} from '../../src/protocols/probe.js';
import { decodeHostfile } from '../../src/protocols/hostfile.js';
import { Advert, decodeTxt, encodeTxt } from '../../src/protocols/cluster-discovery.js';
import { checkPlannerBody, PlannerBody } from '../../src/actors/placement-planner/plan-request.js';
import {
  PlacementInputSchema,
  decodePlacementInput,
} from '../../src/actors/placement-planner/search/placement-input.js';
import {
  decodePlacementRequest,
  PlacementRequestInput,
} from '../../src/actors/placement-planner/search/placement-request.js';

/** Every kind must be in its table: a schema added without a row fails here. */
const covers = (tt: Pick<typeof t, 'same'>, name: string, kinds: readonly string[], rows: readonly Kind[]): void => {
  tt.same([...rows.map((r) => r.name)].sort(), [...kinds].sort(), `${name}: one round-trip row per kind`);
};

t.test('cluster events: every type round-trips and names each bad field', async (t) => {
  const rows: Kind[] = CLUSTER_EVENT_TYPES.map((type) => {
    const sample = everyEvent.find((e) => e.type === type);
    if (!sample) throw new Error(`no sample event of type ${type} in test/fixtures/topology/events.ts`);
    return {
      name: type,
      schema: EventSchemas[type],
      sample: sample as unknown as Record<string, unknown>,
      decode: decodeClusterEvent,
      field: (k) => `event.${k}`,
    };
  });
  covers(t, 'events', Object.keys(EventSchemas), rows);
  for (const row of rows) roundTrip(t, row);
  roundTrip(t, {
    name: 'IndexedEvent',
    schema: IndexedEvent,
    sample: { index: 3, term: 1, event: everyEvent[0], at: 5 },
    decode: (v) => decodeIndexedEvent(v),
    field: (k) => `indexed.${k}`,
  });
});

t.test('commands: every type round-trips and names each bad field', async (t) => {
  const samples = {
    PlaceInstance: [
      PlaceInstance,
      {
        type: 'PlaceInstance',
        commandId: 'c1',
        workload: ringWorkload,
        sharding: 'pipeline',
        backend: 'ring',
        minNodes: 1,
        requiredNodes: ['a'],
        instanceId: 'i',
      },
    ],
    CreateInstance: [CreateInstance, { type: 'CreateInstance', instance: plan2, workload: execWorkload }],
    DeleteInstance: [DeleteInstance, { type: 'DeleteInstance', instanceId: 'i', reason: 'user' }],
    ReplaceInstance: [ReplaceInstance, { type: 'ReplaceInstance', instanceId: 'i' }],
    SubmitTask: [
      SubmitTask,
      { type: 'SubmitTask', instanceId: 'i', kind: 'exec', params: { a: [1, 'b', null] }, timeoutMs: 10 },
    ],
    CancelTask: [CancelTask, { type: 'CancelTask', taskId: 't' }],
  } as const;
  const rows: Kind[] = Object.entries(samples).map(([name, [schema, sample]]) => ({
    name,
    schema,
    sample,
    decode: decodeCommand,
    field: (k) => `command.${k}`,
  }));
  covers(t, 'commands', COMMAND_TYPES, rows);
  for (const row of rows) roundTrip(t, row);
});

t.test('peer frames: every type round-trips and names each bad field', async (t) => {
  const hex = (n: number): string => 'ab'.repeat(n / 2);
  const samples: Record<string, Record<string, unknown>> = {
    hello: {
      type: 'hello',
      v: 4,
      nodeId: 'a',
      cluster: 'c',
      incarnation: 1,
      startedAt: 5,
      port: 7000,
      apiPort: 52415,
      nonce: hex(32),
      auth: true,
      name: 'host-a',
      version: '0.1.0',
      addresses: ['10.77.0.1'],
    },
    auth: { type: 'auth', proof: hex(64) },
    refuse: { type: 'refuse', reason: 'self', detail: 'me' },
    heartbeat: {
      type: 'heartbeat',
      term: 2,
      role: 'leader',
      leader: 'a',
      lastIndex: 3,
      lastTerm: 2,
      lastHash: 'h',
      commit: 3,
      commitHash: 'h',
    },
    'vote-request': { type: 'vote-request', term: 2, lastIndex: 3, lastTerm: 1 },
    vote: { type: 'vote', term: 2, granted: true, leader: null, lastIndex: 3, lastTerm: 1 },
    append: {
      type: 'append',
      term: 2,
      entries: [{ index: 1, term: 2, event: { type: 'NodeGone', nodeId: 'b', reason: 'r' }, at: 5 }],
      commit: 1,
      commitHash: 'h',
    },
    'append-ack': { type: 'append-ack', term: 2, index: 1, hash: 'h' },
    'gap-request': { type: 'gap-request', from: 1, to: 5, prevHash: 'h' },
    'snapshot-request': { type: 'snapshot-request' },
    snapshot: {
      type: 'snapshot',
      term: 2,
      index: 5,
      lastTerm: 2,
      lastHash: 'h',
      digest: 'd',
      state: { any: ['thing'] },
    },
    forward: { type: 'forward', id: 1, kind: 'propose', body: [{ type: 'X', a: 1 }] },
    peers: { type: 'peers', peers: [{ nodeId: 'b', host: '10.77.0.2', port: 7000 }] },
  };
  const replies = (PeerFrameSchemas['forward-reply'] as unknown as { anyOf: Kind['schema'][] }).anyOf;
  const rows: Kind[] = [
    ...Object.entries(samples).map(([name, sample]) => ({
      name,
      schema: PeerFrameSchemas[name as keyof typeof PeerFrameSchemas],
      sample,
      decode: (v: unknown) => decodePeerFrame(v),
      field: (k: string) => `frame.${k}`,
    })),
    {
      name: 'forward-reply',
      schema: replies[0]!,
      sample: { type: 'forward-reply', id: 2, ok: true, outcome: { index: 3 } },
      decode: (v) => decodePeerFrame(v),
      field: (k) => `frame.${k}`,
    },
    {
      name: 'forward-reply',
      schema: replies[1]!,
      sample: {
        type: 'forward-reply',
        id: 2,
        ok: false,
        error: { code: 'TORUS_NO_LEADER', message: 'no', details: {} },
      },
      decode: (v) => decodePeerFrame(v),
      field: (k) => `frame.${k}`,
    },
  ];
  covers(
    t,
    'peer frames',
    Object.keys(PeerFrameSchemas),
    rows.filter((r, i) => rows.findIndex((o) => o.name === r.name) === i),
  );
  for (const row of rows) roundTrip(t, row);
  t.same(
    decodePeerFrame({ type: 'forward-reply', id: 1, ok: true }),
    { type: 'forward-reply', id: 1, ok: true, outcome: null },
    'no outcome reads as null',
  );
  t.throws(() => decodePeerFrame({ type: 'nope' }), /frame\.type: expected one of hello, auth/);
});

t.test('runner frames: every type both ways round-trips and names each bad field', async (t) => {
  const config = {
    runnerId: 'i@a',
    instanceId: 'i',
    nodeId: 'a',
    rank: 0,
    worldSize: 2,
    layerStart: 0,
    layerEnd: 6,
    workload: { kind: 'exec', command: ['/bin/echo', 'hi'], cwd: '/tmp' },
    hosts: ['0.0.0.0:5000', '10.77.0.2:5000'],
    hostfilePath: '/d/h.json',
    env: { A: 'b' },
    ringKey: 'ab'.repeat(16),
  };
  const down: Record<string, Record<string, unknown>> = {
    start: { type: 'start', v: 1, config },
    connect: { type: 'connect', taskId: 't' },
    load: { type: 'load', taskId: 't' },
    warmup: { type: 'warmup', taskId: 't' },
    shutdown: { type: 'shutdown', taskId: 't' },
    task: { type: 'task', taskId: 't', op: 'all-reduce', params: { n: [1, 2] } },
    cancel: { type: 'cancel', taskId: 't' },
  };
  const up: Record<string, Record<string, unknown>> = {
    status: { type: 'status', status: { state: 'Loading', layersLoaded: 1, totalLayers: 2 } },
    ack: { type: 'ack', taskId: 't' },
    'task-status': { type: 'task-status', taskId: 't', status: 'complete', result: { ok: true }, error: 'none' },
    'cancel-ack': { type: 'cancel-ack', taskId: 't' },
    diagnostic: { type: 'diagnostic', level: 'warn', message: 'm' },
    fatal: { type: 'fatal', message: 'm' },
  };
  const downRows: Kind[] = Object.entries(down).map(([name, sample]) => ({
    name,
    schema: DownFrameSchemas[name as keyof typeof DownFrameSchemas],
    sample,
    decode: decodeDownFrame,
    field: (k: string) => k,
  }));
  const upRows: Kind[] = Object.entries(up).map(([name, sample]) => ({
    name,
    schema: UpFrameSchemas[name as keyof typeof UpFrameSchemas],
    sample,
    decode: decodeUpFrame,
    field: (k: string) => k,
  }));
  covers(t, 'down frames', Object.keys(DownFrameSchemas), downRows);
  covers(t, 'up frames', Object.keys(UpFrameSchemas), upRows);
  for (const row of [...downRows, ...upRows]) roundTrip(t, row);
  roundTrip(t, {
    name: 'RunnerStartConfig',
    schema: RunnerStartConfig,
    sample: config,
    decode: (v) => decodeStartConfig(v),
    field: (k) => `config.${k}`,
  });
  t.throws(
    () => decodeStartConfig({ ...config, rank: 2 }),
    /config\.rank/,
    'rank below worldSize (a rule after the check)',
  );
  t.throws(
    () => decodeUpFrame({ type: 'status', status: { state: 'Idle', extra: 1 } }),
    /status\.extra: unknown field/,
    'a bad field of the state the status is in',
  );
});

t.test('API request bodies: every schema round-trips and names each bad field', async (t) => {
  const workload = { id: 'w', memoryBytes: 1024, layers: 4 };
  const rows: Kind[] = [
    {
      name: 'PreviewRequest',
      // the shape beside its rule across fields (pinned nodes alone: test/actors/placement-planner/search/pinned-placement.test.ts)
      schema: requestSchemas.PreviewRequest.allOf[0],
      sample: { workload, sharding: 'tensor', backend: 'jaccl', minNodes: 2, requiredNodes: ['a'] },
      decode: (v) => requestCodecs.preview.decode(v),
      field: (k) => k,
    },
    {
      name: 'CreateInstanceRequest',
      schema: requestSchemas.CreateInstanceRequest.allOf[0],
      sample: { workload: { ...workload, kind: 'exec', command: 'x', env: { A: 'b' } }, instanceId: 'i' },
      decode: (v) => requestCodecs.createInstance.decode(v),
      field: (k) => k,
    },
    {
      name: 'RingBenchRequest',
      schema: requestSchemas.RingBenchRequest,
      sample: {
        nodes: ['a'],
        ops: ['all-reduce'],
        dtype: 'float32',
        minBytes: 1,
        maxBytes: 2,
        stepFactor: 2,
        iterations: 1,
        warmup: 0,
        bidirectional: true,
      },
      decode: (v) => requestCodecs.ringBench.decode(v),
      field: (k) => k,
    },
    // The shape beside its rules across fields (checked below): a pinned option, so no minNodes / requiredNodes.
    {
      name: 'PipelineBenchRequest',
      schema: requestSchemas.PipelineBenchRequest.allOf[0],
      sample: {
        workload: { ...workload, hiddenSize: 64 },
        objective: 'throughput',
        nodes: ['b', 'a'],
        steps: 5,
        warmup: 1,
      },
      decode: (v) => requestCodecs.pipelineBench.decode(v),
      field: (k) => k,
    },
    {
      name: 'MeasureLinksRequest',
      schema: requestSchemas.MeasureLinksRequest,
      sample: { peer: 'b', ip: '10.77.0.2' },
      decode: (v) => requestCodecs.measureLinks.decode(v),
      field: (k) => k,
    },
    {
      name: 'CalibrationRequest',
      schema: requestSchemas.CalibrationRequest,
      sample: {
        framework: 'torch',
        command: ['/usr/bin/python3', 'calibrate_torch.py'],
        nodes: ['a'],
        timeoutMs: 30000,
      },
      decode: (v) => requestCodecs.calibration.decode(v),
      field: (k) => k,
    },
    // A union of two closed forms: the `nodes` form round-trips here, the `instance` form below.
    {
      name: 'BroadcastRequest',
      schema: requestSchemas.BroadcastRequest.anyOf[0],
      sample: { nodes: ['a', 'b'] },
      decode: (v) => requestCodecs.broadcast.decode(v),
      field: (k) => k,
    },
    {
      name: 'EmptyRequest',
      schema: requestSchemas.EmptyRequest,
      sample: {},
      decode: (v) => requestCodecs.empty.decode(v),
      field: (k) => k,
    },
  ];
  covers(t, 'requests', Object.keys(requestSchemas), rows);
  for (const row of rows) roundTrip(t, row);
  const unpinned = { workload: { ...workload, activationBytesPerToken: 8 }, minNodes: 2, requiredNodes: ['a'] };
  t.same(requestCodecs.pipelineBench.decode(unpinned), unpinned, 'a pipeline bench the planner places');
  t.throws(() => requestCodecs.pipelineBench.decode({ ...unpinned, nodes: ['a'] }), {
    message: /^body nodes: cannot be combined with minNodes or requiredNodes/,
  });
  t.throws(() => requestCodecs.pipelineBench.decode({ workload }), {
    message: /^body workload: needs hiddenSize or activationBytesPerToken/,
  });
  t.same(requestCodecs.broadcast.decode({ instance: 'i' }), { instance: 'i' }, 'the instance form of a broadcast');
  t.throws(
    () => requestCodecs.broadcast.decode({ instance: 7 }),
    /body instance: expected a string/,
    'the form the body uses names its field',
  );
});

t.test('actor mailbox bodies: every message and request kind round-trips and names each bad field', async (t) => {
  for (const table of actorTables()) {
    covers(t, table.name, table.kinds, table.rows);
    for (const row of table.rows) roundTrip(t, row);
  }
});

t.test(
  'state snapshot: the snapshot, the state and every record kind round-trip and name each bad field',
  async (t) => {
    const rows = stateRows();
    covers(t, 'state', STATE_KINDS, rows);
    for (const row of rows) roundTrip(t, row);
  },
);

t.test('probe answers and the planner body round-trip and name each bad field', async (t) => {
  const rows: Kind[] = [
    {
      name: 'identity',
      schema: ProbeIdentity,
      sample: { nodeId: 'n', clusterName: 'c', incarnation: 3 },
      decode: decodeIdentity,
      field: (k) => `identity.${k}`,
    },
    {
      name: 'sink',
      schema: SinkReport,
      sample: { bytes: 10, seconds: 1.5, steadyBytes: 8, steadySeconds: 1, bps: 64 },
      decode: decodeSinkReport,
      field: (k) => `sink.${k}`,
    },
  ];
  covers(
    t,
    'probe answers',
    Object.keys(ProbeAnswers).filter((k) => k !== 'nodeId'),
    rows,
  );
  for (const row of rows) roundTrip(t, row);
  t.equal(decodeNodeIdResponse('node-a'), 'node-a');
  t.throws(() => decodeNodeIdResponse('a b'), { code: 'TORUS_API_VALIDATION', details: { path: 'node_id' } });
  t.throws(
    () => decodeIdentity({ nodeId: 'n', clusterName: 'c', incarnation: 3, extra: 1 }),
    { code: 'TORUS_API_VALIDATION', message: /identity\.extra: unknown field/ },
    'a peer answer keeps the wire words',
  );
  roundTrip(t, {
    name: 'PlannerBody',
    schema: PlannerBody,
    sample: { type: 'plan', state: { nodes: [] }, request: { x: 1 }, seed: 7 },
    decode: checkPlannerBody,
    field: (k) => k,
  });
  t.throws(() => checkPlannerBody({ type: 'plan', request: {}, seed: 2 ** 32 }), {
    code: 'TORUS_API_VALIDATION',
    details: { path: 'seed' },
  });
  // The planner's own inputs (its mailbox body's `state` and `request`, the `--state` / `--request` files of `torus plan`).
  const stateSample = {
    nodes: [
      {
        id: 'a',
        memory: { ramAvailable: 1, ramTotal: 2 },
        interfaces: [{ name: 'en0', ip: '10.77.0.1', type: 'ethernet' }],
        rdmaEnabled: false,
        cached: { w: 0.5 },
      },
      { id: 'b' },
    ],
    links: [{ source: 'a', sink: 'b', ip: '10.77.0.2', type: 'ethernet', rttMs: 1, bandwidthBps: 1e9 }],
  };
  roundTrip(t, {
    name: 'PlacementInputSchema',
    schema: PlacementInputSchema,
    sample: stateSample,
    decode: (v) => {
      const d = decodePlacementInput(v);
      t.equal(d.nodes.length, 2);
      return v;
    },
    field: (k) => `state.${k}`,
  });
  const requestSample = {
    workload: { id: 'w', memoryBytes: 1, layers: 2, hiddenSize: 8, kvHeads: 2, supportsTensor: true, artifactBytes: 0 },
    sharding: 'pipeline',
    backend: 'ring',
    minNodes: 1,
    requiredNodes: ['a'],
  };
  roundTrip(t, {
    name: 'PlacementRequestInput',
    schema: PlacementRequestInput,
    sample: requestSample,
    decode: (v) => {
      decodePlacementRequest(v);
      return v;
    },
    field: (k) => `request.${k}`,
  });
  t.throws(
    () =>
      decodePlacementInput({
        nodes: [{ id: 'a' }, { id: 'b' }],
        links: [{ source: 'a', sink: 'b', ip: '10.77.0.2', rdma: { sourceIface: 'rdma_en2', sinkIface: 'rdma_en3' } }],
      }),
    { code: 'TORUS_API_VALIDATION', details: { path: 'state.links[0].ip' } },
    'a cable carries no socket fields (a rule after the check)',
  );
});

t.test("text formats: a hostfile and a discovery TXT record are read into their schemas' shape", async (t) => {
  const path = (run: () => unknown): unknown => {
    try {
      run();
      return 'accepted';
    } catch (e) {
      return `${(e as { code?: string; details?: { path?: unknown } }).code} ${String((e as { details?: { path?: unknown } }).details?.path)}`;
    }
  };
  t.same(decodeHostfile('[["0.0.0.0:5000"],"[fe80::1]:7"]'), [
    { ip: '0.0.0.0', port: 5000 },
    { ip: 'fe80::1', port: 7 },
  ]);
  t.equal(
    path(() => decodeHostfile('{"a":1}')),
    'TORUS_CONFIG_INVALID hostfile',
  );
  t.equal(
    path(() => decodeHostfile('[]')),
    'TORUS_CONFIG_INVALID hostfile',
  );
  t.equal(
    path(() => decodeHostfile('[["1.2.3.4:5"], 7]')),
    'TORUS_CONFIG_INVALID hostfile[1]',
  );
  t.equal(
    path(() => decodeHostfile('[["1.2.3.4:5"], []]')),
    'TORUS_CONFIG_INVALID hostfile[1]',
  );
  t.equal(
    path(() => decodeHostfile('["1.2.3.4:5", "1.2.3.999:5"]')),
    'TORUS_CONFIG_INVALID hostfile[1]',
    'the text is still parsed',
  );
  const advert = { nodeId: 'node-a', cluster: 'ab12', port: 7001, v: 4, incarnation: 9 };
  t.same(decodeTxt(encodeTxt(advert)), advert);
  const keys: Record<string, string> = { nodeId: 'id', cluster: 'c', port: 'port', v: 'v', incarnation: 'inc' };
  t.same(Object.keys(Advert.properties).sort(), Object.keys(keys).sort(), 'every Advert field has its TXT key here');
  for (const [field, key] of Object.entries(keys)) {
    const txt = (value: string | undefined): string[] =>
      encodeTxt(advert)
        .map(String)
        .filter((s) => !s.startsWith(`${key}=`))
        .concat(value === undefined ? [] : [`${key}=${value}`]);
    t.equal(decodeTxt(txt(undefined)), null, `${field}: missing refused`);
    const integer =
      (Advert.properties[field as keyof typeof Advert.properties] as { type?: string }).type === 'integer';
    t.equal(decodeTxt(txt(integer ? '99999999999999999' : 'x y')), null, `${field}: a bad value refused`);
  }
  t.equal(
    decodeTxt([
      ...encodeTxt(advert)
        .map(String)
        .filter((s) => !s.startsWith('port=')),
      'port=0x10',
    ]),
    null,
    'decimal digits only',
  );
});

t.test('nested fields and unions are named down to the failing leaf', async (t) => {
  const named = (run: () => unknown): unknown => {
    try {
      run();
      return 'accepted';
    } catch (error) {
      return (error as { details?: { path?: unknown } }).details?.path;
    }
  };
  const created = { type: 'InstanceCreated', instance: plan2, workload: execWorkload };
  t.equal(
    named(() => decodeClusterEvent({ ...created, workload: { ...execWorkload, env: { FOO: 7 } } })),
    'event.workload.env.FOO',
  );
  t.equal(
    named(() => decodeClusterEvent({ ...created, workload: { ...execWorkload, kind: 'nope' } })),
    'event.workload.kind',
  );
  t.equal(
    named(() =>
      decodeClusterEvent({
        ...created,
        instance: { ...plan2, shards: [plan2.shards[0], { ...plan2.shards[1], rank: -1 }] },
      }),
    ),
    'event.instance.shards[1].rank',
  );
  t.equal(
    named(() =>
      decodeClusterEvent({
        type: 'NodeProfileUpdated',
        nodeId: 'a',
        interfaces: [],
        memory: { ramTotal: 1, ramAvailable: 1 },
        runners: { allowExec: 'yes', maxRunners: 1 },
      }),
    ),
    'event.runners.allowExec',
  );
  t.equal(
    named(() =>
      decodeClusterEvent({
        type: 'NodeProfileUpdated',
        nodeId: 'a',
        interfaces: [],
        memory: { ramTotal: 1, ramAvailable: 1 },
        cached: { __proto__x: 2 },
      }),
    ),
    'event.cached.__proto__x',
  );
  t.equal(
    named(() =>
      requestCodecs.createInstance.decode({
        workload: {
          id: 'w',
          memoryBytes: 1,
          layers: 1,
          kind: 'exec',
          command: 'x',
          env: JSON.parse('{"__proto__": "x"}'),
        },
      }),
    ),
    'workload.env.__proto__',
  );
  t.equal(
    named(() =>
      requestCodecs.createInstance.decode({ workload: { id: 'w', memoryBytes: 1, layers: 1, env: { A: 'x' } } }),
    ),
    'workload.env',
    'env on a ring workload (kind left out) is not a field',
  );
  t.equal(
    named(() =>
      decodeClusterEvent({
        type: 'ArtifactHeld',
        nodeId: 'a',
        artifactId: 'ab'.repeat(32),
        name: 'w',
        bytes: 1,
        chunks: 1,
        have: 2,
      }),
    ),
    'event.have',
  );
  t.same(
    decodeCommand({ type: 'PlaceInstance', workload: { ...execWorkload, restart: { policy: 'on-failure' } } }),
    { type: 'PlaceInstance', workload: { ...execWorkload, restart: { policy: 'on-failure', max: 3 } } },
    'restart.max default filled after the check',
  );
  const failed = { type: 'RunnerStatusChanged', instanceId: 'i', nodeId: 'a', status: 'Failed' };
  t.same(
    decodeClusterEvent({ ...failed, reason: undefined }),
    failed,
    'an undefined optional field (structured clone) reads as absent',
  );
  t.equal(
    named(() => decodeClusterEvent({ ...failed, extra: undefined })),
    'event.extra',
    'an unknown field is refused even when undefined',
  );
  t.equal(
    named(() =>
      decodeClusterEvent({
        type: 'NodeProfileUpdated',
        nodeId: 'a',
        interfaces: [],
        memory: new (class M {
          ramTotal = 1;
          ramAvailable = 1;
        })(),
      }),
    ),
    'event.memory',
    'class instances are not plain data',
  );
});
