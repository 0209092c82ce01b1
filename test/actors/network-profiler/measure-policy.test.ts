/**
 * The measurement policy (measure-policy.ts): a link is not capacity-probed while an instance runs on either of
 * its nodes, nor within the quiet time after the last one there ended; and the statechart keeps such links queued
 * (deferred, not dropped) and measures them once the policy allows, including a confirmation request that
 * arrives while a job runs.
 */
import t from 'tap';
import { createActor, fromCallback } from 'xstate';
import {
  networkProfilerMachine,
  type MeasureJob,
  type ProfilerEmitted,
  type ProfilerEvent,
} from '../../../src/actors/network-profiler/machine.js';
import {
  instancesFromAnswer,
  linksToProbe,
  NO_WORK,
  probeDecision,
  updateWork,
  type WorkInstance,
} from '../../../src/actors/network-profiler/measure-policy.js';
import type { PeerTarget, ReachResult } from '../../../src/actors/network-profiler/probes/reachability.js';

const job = (id: string, nodes: string[], active = true): WorkInstance => ({ id, nodes, active });

t.test('probeDecision: busy endpoints defer, the quiet time after the end defers, other links go ahead', async (t) => {
  const w1 = updateWork(NO_WORK, [job('i1', ['a', 'b'])], 1000);
  t.match(probeDecision(w1, 'a', 'b', 1000), { probe: false, reason: /instance i1 runs on a/ });
  t.match(
    probeDecision(w1, 'c', 'b', 1000),
    { probe: false, reason: /runs on b/ },
    'a probe to a busy node loads its uplink too',
  );
  t.match(probeDecision(w1, 'a', 'c', 1000), { probe: false }, 'a busy node probes nobody');
  t.same(probeDecision(w1, 'c', 'd', 1000), { probe: true }, 'nodes without work are measured');

  const w2 = updateWork(w1, [], 5000);
  t.same(w2.busy, {});
  t.same(w2.freedAt, { a: 5000, b: 5000 }, 'freed when the instance is gone');
  t.same(probeDecision(w2, 'a', 'b', 6000, 3000), {
    probe: false,
    reason: 'an instance just ended on an endpoint',
    until: 8000,
  });
  t.same(probeDecision(w2, 'a', 'b', 8000, 3000), { probe: true }, 'probed again after the quiet time');

  const w3 = updateWork(w2, [job('i2', ['b'])], 6000);
  t.same(w3.freedAt, { a: 5000 }, 'busy again: no freedAt for b');
  t.match(probeDecision(w3, 'a', 'c', 9000, 3000), { probe: true });
  t.same(
    updateWork(w3, [job('i2', ['b'], false)], 7000).busy,
    {},
    'a finished instance (failed/completed) frees its nodes',
  );
});

t.test('linksToProbe splits the queue; instancesFromAnswer reads the keeper answer strictly', async (t) => {
  const work = updateWork(NO_WORK, [job('i', ['b'])], 0);
  const split = linksToProbe(
    [
      { key: 'b|1', sink: 'b' },
      { key: 'c|2', sink: 'c' },
    ],
    work,
    'a',
    0,
  );
  t.same(split, { now: [{ key: 'c|2', sink: 'c' }], deferred: [{ key: 'b|1', sink: 'b' }] });
  t.same(
    instancesFromAnswer({
      instances: [
        { id: 'x', status: 'active', plan: { nodes: ['a', 'b'] } },
        { id: 'y', status: 'failed', plan: { nodes: ['c'] } },
        { id: 'z', status: 'active', job: { state: 'completed' }, plan: { nodes: ['d'] } },
        { id: 'w', status: 'needs-replacement', plan: { nodes: ['e', 7] } },
        { id: 5, plan: { nodes: [] } },
        { id: 'v' },
        null,
      ],
    }),
    [job('x', ['a', 'b']), job('y', ['c'], false), job('z', ['d'], false), job('w', ['e'])],
  );
  t.same(instancesFromAnswer(null), []);
  t.same(instancesFromAnswer({ instances: 'no' }), []);
});

t.test(
  'statechart: a measurement asked for while an instance runs waits until it ended and the quiet time passed',
  async (t) => {
    let clock = 1000;
    const measured: MeasureJob[][] = [];
    const machine = networkProfilerMachine.provide({
      actors: {
        probeRound: fromCallback<ProfilerEvent, { targets: readonly PeerTarget[] }>(({ input, sendBack }) => {
          for (const p of input.targets)
            for (const a of p.addresses) {
              const ip = typeof a === 'string' ? a : a.ip;
              const result: ReachResult = {
                ok: true,
                address: ip,
                port: p.port,
                nodeId: p.nodeId,
                type: 'ethernet',
                attempts: 1,
                elapsedMs: 1,
              };
              sendBack({ type: 'probe.result', result });
            }
          sendBack({ type: 'probe.done' });
        }),
        measureLinks: fromCallback<ProfilerEvent, { jobs: readonly MeasureJob[] }>(({ input, sendBack }) => {
          measured.push([...input.jobs]);
          for (const j of input.jobs)
            sendBack({ type: 'measure.result', key: j.key, rttMs: 0.5, bandwidthBps: 1e9, measuredAt: clock });
          sendBack({ type: 'measure.done' });
        }),
      },
    });
    const actor = createActor(machine, {
      input: { nodeId: 'n0', probeIntervalMs: 3_600_000, quietMs: 2000, now: () => clock },
    });
    const emitted: ProfilerEmitted[] = [];
    actor.on('*', (e) => emitted.push(e));
    actor.start();
    const peers: PeerTarget[] = [
      { nodeId: 'n1', port: 1, addresses: ['10.77.0.2'] },
      { nodeId: 'n2', port: 1, addresses: ['10.77.0.3'] },
    ];

    // An instance on n0 and n1 is placed before the links are found (a job started right as the cluster forms).
    actor.send({ type: 'work', instances: [job('job-1', ['n0', 'n1'])] });
    actor.send({ type: 'peers', peers });
    t.same(
      emitted.map((e) => e.type),
      ['LinkUp', 'LinkUp'],
      'links are announced (reachability is not held back)',
    );
    t.same(measured, [], 'but not capacity-probed: n0 itself is busy');
    t.same(actor.getSnapshot().context.toMeasure, ['n1|10.77.0.2', 'n2|10.77.0.3'], 'both stay queued');

    actor.send({ type: 'measure' });
    t.same(measured, [], 'a request (the confirmation pass, POST /v1/links/measure) is deferred as well');

    clock = 5000;
    actor.send({ type: 'work', instances: [] });
    actor.send({ type: 'probe' });
    t.same(measured, [], 'the instance is gone but the quiet time has not passed');

    clock = 7001;
    actor.send({ type: 'probe' });
    t.same(
      measured.map((jobs) => jobs.map((j) => j.key)),
      [['n1|10.77.0.2', 'n2|10.77.0.3']],
      'measured once the quiet time passed',
    );
    t.same(emitted.filter((e) => e.type === 'LinkMeasured').length, 2);

    // Only the busy peer's link waits: n2 is free.
    actor.send({ type: 'work', instances: [job('job-2', ['n1'])] });
    actor.send({ type: 'measure' });
    t.same(
      measured.at(-1)!.map((j) => j.key),
      ['n2|10.77.0.3'],
      'the free link is measured at once',
    );
    t.same(actor.getSnapshot().context.toMeasure, ['n1|10.77.0.2'], 'the busy one waits');

    // The worker's last-moment check may still defer a job the statechart handed out: it is queued again.
    actor.send({ type: 'work', instances: [] });
    clock = 20_000;
    actor.send({ type: 'measure.deferred', key: 'n2|10.77.0.3' });
    t.equal(actor.getSnapshot().value, 'idle');
    t.same(
      measured.at(-1)!.map((j) => j.key),
      ['n1|10.77.0.2', 'n2|10.77.0.3'],
      'requeued and measured with the other',
    );
    actor.stop();
  },
);
