/**
 * Regression test (pure statechart, no lab) for a bug found end to end (test/e2e/restart.test.ts): after a node
 * restarted quickly (kill -9, started again within the failure timeout), the links from the other nodes to it
 * never came back. Its new NodeJoined (next incarnation) drops every link to and from it in the cluster state,
 * but the other profilers still held those links (its addresses kept answering with the same id), saw the same
 * targets, and never announced them again. Targets now carry the peer's incarnation; a change forgets that
 * peer's links so the next round announces (LinkUp) and measures them again.
 */
import t, { type Test } from 'tap';
import { createActor, fromCallback } from 'xstate';
import {
  networkProfilerMachine,
  type MeasureJob,
  type ProfilerEmitted,
  type ProfilerEvent,
} from '../../src/actors/network-profiler/machine.js';
import { decodeProfilerEvent } from '../../src/actors/network-profiler/messages.js';
import { targetsFromTopology } from '../../src/actors/network-profiler/links.js';
import type { PeerTarget } from '../../src/actors/network-profiler/probes/reachability.js';

function harness(t: Test) {
  const machine = networkProfilerMachine.provide({
    actors: {
      probeRound: fromCallback<ProfilerEvent, { targets: readonly PeerTarget[] }>(({ input, sendBack }) => {
        for (const p of input.targets)
          for (const a of p.addresses) {
            const ip = typeof a === 'string' ? a : a.ip;
            sendBack({
              type: 'probe.result',
              result: {
                ok: true,
                address: ip,
                port: p.port,
                nodeId: p.nodeId,
                type: 'ethernet',
                attempts: 1,
                elapsedMs: 1,
              },
            });
          }
        sendBack({ type: 'probe.done' });
      }),
      measureLinks: fromCallback<ProfilerEvent, { jobs: readonly MeasureJob[] }>(({ input, sendBack }) => {
        for (const j of input.jobs)
          sendBack({ type: 'measure.result', key: j.key, rttMs: 0.5, bandwidthBps: 1e9, measuredAt: 1000 });
        sendBack({ type: 'measure.done' });
      }),
    },
  });
  const actor = createActor(machine, { input: { nodeId: 'node-0', incarnation: 1, probeIntervalMs: 3_600_000 } });
  const emitted: ProfilerEmitted[] = [];
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  t.teardown(() => actor.stop());
  return { actor, emitted };
}

const topology = (inc2: number) => ({
  nodes: [
    {
      id: 'node-0',
      incarnation: 1,
      apiPort: 52515,
      profile: { interfaces: [{ name: 'lan0', ips: ['10.77.0.1'], type: 'ethernet' }] },
    },
    {
      id: 'node-1',
      incarnation: 1,
      apiPort: 52515,
      profile: { interfaces: [{ name: 'lan0', ips: ['10.77.0.2'], type: 'ethernet' }] },
    },
    {
      id: 'node-2',
      incarnation: inc2,
      apiPort: 52515,
      profile: { interfaces: [{ name: 'lan0', ips: ['10.77.0.3'], type: 'ethernet' }] },
    },
  ],
});
const show = (es: ProfilerEmitted[]) => es.map((e) => `${e.type} ${'sink' in e ? e.sink : ''}`);

t.test('a peer that restarted (next incarnation, same addresses) is linked and measured again', async (t) => {
  const { actor, emitted } = harness(t);
  const before = targetsFromTopology(topology(1), 'node-0');
  t.match(before[1], { nodeId: 'node-2', incarnation: 1 }, 'targets carry the incarnation');
  actor.send({ type: 'peers', peers: before });
  t.same(show(emitted), ['LinkUp node-1', 'LinkUp node-2', 'LinkMeasured node-1', 'LinkMeasured node-2']);

  emitted.length = 0;
  actor.send({ type: 'peers', peers: targetsFromTopology(topology(1), 'node-0') });
  actor.send({ type: 'probe' });
  t.same(emitted, [], 'same peers, same incarnations: nothing announced or measured again');

  actor.send({ type: 'peers', peers: targetsFromTopology(topology(2), 'node-0') });
  t.same(
    show(emitted),
    ['LinkUp node-2', 'LinkMeasured node-2'],
    'node-2 restarted: its link is announced and measured again (no LinkDown: the state already dropped it)',
  );
  t.match(emitted[0], { type: 'LinkUp', source: 'node-0', sink: 'node-2', ip: '10.77.0.3', sourceIncarnation: 1 });
});

t.test('the peers message accepts an incarnation (and still refuses unknown fields)', async (t) => {
  const ok = decodeProfilerEvent({
    type: 'peers',
    peers: [{ nodeId: 'node-1', incarnation: 4, port: 7600, addresses: ['10.77.0.2'] }],
  });
  t.match(ok, { type: 'peers', peers: [{ nodeId: 'node-1', incarnation: 4 }] });
  t.throws(() =>
    decodeProfilerEvent({ type: 'peers', peers: [{ nodeId: 'node-1', incarnation: -1, port: 7600, addresses: [] }] }),
  );
  t.throws(() =>
    decodeProfilerEvent({ type: 'peers', peers: [{ nodeId: 'node-1', extra: 1, port: 7600, addresses: [] }] }),
  );
});
