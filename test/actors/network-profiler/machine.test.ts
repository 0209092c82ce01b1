import t from 'tap';
import { createActor, fromCallback } from 'xstate';
import {
  networkProfilerMachine,
  type MeasureJob,
  type ProfilerEmitted,
  type ProfilerEvent,
} from '../../../src/actors/network-profiler/machine.js';
import { decodeProfilerEvent } from '../../../src/actors/network-profiler/messages.js';
import { interfacesChanged, memoryChanged, targetsFromTopology } from '../../../src/actors/network-profiler/links.js';
import type { PeerTarget, ReachResult } from '../../../src/actors/network-profiler/probes/reachability.js';

/** Deterministic I/O stand-ins: which addresses answer is a table the test changes between rounds. */
function harness(answers: Map<string, string | null>) {
  const measured: MeasureJob[][] = [];
  const machine = networkProfilerMachine.provide({
    actors: {
      probeRound: fromCallback<ProfilerEvent, { targets: readonly PeerTarget[] }>(({ input, sendBack }) => {
        for (const p of input.targets)
          for (const a of p.addresses) {
            const ip = typeof a === 'string' ? a : a.ip;
            const type = typeof a === 'string' ? 'unknown' : (a.type ?? 'unknown');
            const who = answers.get(ip);
            const result: ReachResult =
              who === p.nodeId
                ? { ok: true, address: ip, port: p.port, nodeId: who, type, attempts: 1, elapsedMs: 1 }
                : {
                    ok: false,
                    address: ip,
                    port: p.port,
                    expectedNodeId: p.nodeId,
                    type,
                    reason: who ? 'mismatch' : 'unreachable',
                    ...(who ? { answeredBy: who } : {}),
                    attempts: who ? 1 : 3,
                    elapsedMs: 3,
                  };
            sendBack({ type: 'probe.result', result });
          }
        sendBack({ type: 'probe.done' });
      }),
      measureLinks: fromCallback<ProfilerEvent, { jobs: readonly MeasureJob[] }>(({ input, sendBack }) => {
        measured.push([...input.jobs]);
        for (const j of input.jobs)
          sendBack({
            type: 'measure.result',
            key: j.key,
            rttMs: 0.5,
            bandwidthBps: j.ip.startsWith('10.77.1.') ? 5e9 : 1e9,
            measuredAt: 1000,
          });
        sendBack({ type: 'measure.done' });
      }),
    },
  });
  const actor = createActor(machine, { input: { nodeId: 'node-0', incarnation: 3, probeIntervalMs: 3_600_000 } });
  const emitted: ProfilerEmitted[] = [];
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  return { actor, emitted, measured };
}

const peers: PeerTarget[] = [
  {
    nodeId: 'node-1',
    port: 7600,
    addresses: [
      { ip: '10.77.0.2', type: 'ethernet' },
      { ip: '10.77.1.2', type: 'thunderbolt' },
    ],
  },
  {
    nodeId: 'node-2',
    port: 7600,
    addresses: [
      { ip: '10.77.0.3', type: 'ethernet' },
      { ip: '10.77.0.2', type: 'ethernet' },
    ],
  },
];

t.test(
  'transcript: peers → probing → LinkUp → measuring → LinkMeasured → idle; cut → LinkDown; removal → LinkDown',
  async (t) => {
    const answers = new Map<string, string | null>([
      ['10.77.0.2', 'node-1'],
      ['10.77.1.2', 'node-1'],
      ['10.77.0.3', 'node-2'],
    ]);
    const { actor, emitted, measured } = harness(answers);
    t.equal(actor.getSnapshot().value, 'idle');
    actor.send({ type: 'peers', peers });
    t.equal(actor.getSnapshot().value, 'idle', 'synchronous fakes: the round and the measurement already ran');
    t.same(
      emitted.map((e) => `${e.type} ${'sink' in e ? e.sink : ''}@${'ip' in e ? e.ip : ''}`),
      [
        'LinkUp node-1@10.77.0.2',
        'LinkUp node-1@10.77.1.2',
        'LinkUp node-2@10.77.0.3',
        'LinkMeasured node-1@10.77.0.2',
        'LinkMeasured node-1@10.77.1.2',
        'LinkMeasured node-2@10.77.0.3',
      ],
      "node-2 is never linked at node-1's address",
    );
    t.match(emitted[1], {
      type: 'LinkUp',
      source: 'node-0',
      sink: 'node-1',
      ip: '10.77.1.2',
      linkType: 'thunderbolt',
      sourceIncarnation: 3,
    });
    t.match(emitted[4], { type: 'LinkMeasured', bandwidthBps: 5e9, rttMs: 0.5, measuredAt: 1000 });
    t.equal(measured.length, 1, 'one measurement pass');

    emitted.length = 0;
    actor.send({ type: 'probe' });
    t.same(emitted, [], 'an unchanged round emits nothing and measures nothing');
    t.equal(measured.length, 1);

    answers.set('10.77.1.2', null);
    actor.send({ type: 'probe' });
    t.match(emitted, [{ type: 'LinkDown', sink: 'node-1', ip: '10.77.1.2', reason: /no answer after 3 attempts/ }]);

    emitted.length = 0;
    answers.set('10.77.1.2', 'node-1');
    actor.send({ type: 'probe' });
    t.same(
      emitted.map((e) => e.type),
      ['LinkUp', 'LinkMeasured'],
      'comes back and is re-measured',
    );

    emitted.length = 0;
    actor.send({ type: 'measure', sink: 'node-2' });
    t.same(
      emitted.map((e) => `${e.type} ${'ip' in e ? e.ip : ''}`),
      ['LinkMeasured 10.77.0.3'],
      're-measure on request, only what was asked',
    );

    emitted.length = 0;
    actor.send({ type: 'peers', peers: [peers[0]!] });
    t.match(emitted, [{ type: 'LinkDown', sink: 'node-2', ip: '10.77.0.3', reason: /no longer advertised/ }]);
    t.equal(Object.keys(actor.getSnapshot().context.links).length, 2);
    actor.stop();
  },
);

t.test('profile changes emit NodeProfileUpdated and re-measure on interface change', async (t) => {
  const { actor, emitted, measured } = harness(new Map([['10.77.0.2', 'node-1']]));
  const memory = { ramTotal: 16e9, ramAvailable: 8e9, swapTotal: 0, swapAvailable: 0 };
  const lan = { name: 'lan0', ips: ['10.77.0.1'], type: 'ethernet' as const };
  actor.send({ type: 'profile', profile: { interfaces: [lan], memory } });
  actor.send({ type: 'peers', peers: [{ nodeId: 'node-1', port: 1, addresses: ['10.77.0.2'] }] });
  t.equal(emitted.filter((e) => e.type === 'NodeProfileUpdated').length, 1);
  actor.send({ type: 'profile', profile: { interfaces: [lan], memory: { ...memory, ramAvailable: 8.1e9 } } });
  t.equal(emitted.filter((e) => e.type === 'NodeProfileUpdated').length, 1, 'small memory drift is not news');
  const before = measured.length;
  actor.send({
    type: 'profile',
    profile: { interfaces: [lan, { name: 'p2p1', ips: ['10.77.1.1'], type: 'thunderbolt' }], memory },
  });
  t.equal(emitted.filter((e) => e.type === 'NodeProfileUpdated').length, 2);
  t.equal(measured.length, before + 1, 'links re-measured after our interfaces changed');
  actor.stop();
});

t.test('device figures: a new measurement is announced in the profile, an unchanged one is not', async (t) => {
  const { actor, emitted } = harness(new Map());
  const memory = { ramTotal: 16e9, ramAvailable: 8e9 };
  const lan = { name: 'lan0', ips: ['10.77.0.1'], type: 'ethernet' as const };
  actor.send({ type: 'profile', profile: { interfaces: [lan], memory } });
  const device = {
    memoryBandwidthGBps: 20,
    memoryBandwidthSource: 'measured' as const,
    gflops: 900,
    gflopsSource: 'declared' as const,
    measuredAt: 5,
  };
  actor.send({ type: 'profile', profile: { interfaces: [lan], memory, device } });
  actor.send({ type: 'profile', profile: { interfaces: [lan], memory, device } });
  const updates = emitted.filter((e) => e.type === 'NodeProfileUpdated');
  t.equal(updates.length, 2);
  t.same((updates[1] as { device?: unknown }).device, device);
  actor.stop();
});

t.test('helpers and message decoding', async (t) => {
  t.ok(interfacesChanged(undefined, []));
  t.notOk(
    interfacesChanged(
      [{ name: 'a', ips: ['1.1.1.1', '2.2.2.2'], type: 'wifi' }],
      [{ name: 'a', ips: ['2.2.2.2', '1.1.1.1'], type: 'wifi' }],
    ),
  );
  t.ok(memoryChanged({ ramTotal: 1e10, ramAvailable: 5e9 }, { ramTotal: 1e10, ramAvailable: 4e9 }));
  t.same(
    targetsFromTopology(
      {
        nodes: [
          { id: 'me', apiPort: 1, profile: { interfaces: [{ name: 'x', ips: ['10.0.0.1'], type: 'ethernet' }] } },
          {
            id: 'b',
            apiPort: 52415,
            profile: {
              interfaces: [
                { name: 'lo', ips: ['127.0.0.1'], type: 'unknown' },
                { name: 'en0', ips: ['10.0.0.2', 'fe80::1'], type: 'wifi' },
              ],
            },
          },
          { id: 'c', apiPort: 52415 },
        ],
      },
      'me',
    ),
    [{ nodeId: 'b', port: 52415, addresses: [{ ip: '10.0.0.2', type: 'wifi' }] }],
  );
  t.same(targetsFromTopology(null, 'me'), []);
  t.same(decodeProfilerEvent({ type: 'measure', sink: 'node-1' }), { type: 'measure', sink: 'node-1' });
  t.same(
    decodeProfilerEvent({
      type: 'peers',
      peers: [{ nodeId: 'n', port: 80, addresses: ['10.0.0.1', { ip: '10.0.0.2', type: 'thunderbolt' }] }],
    }).type,
    'peers',
  );
  for (const bad of [
    { type: 'probe.result', result: {} },
    { type: 'peers', peers: [{ nodeId: 'n', port: 0, addresses: [] }] },
    { type: 'measure', ip: 'x; rm' },
    null,
    'probe',
  ])
    t.throws(() => decodeProfilerEvent(bad), { name: 'ValidationError' });
});
