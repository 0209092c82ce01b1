import t from 'tap';
import { Lab } from '../../../src/lab/index.js';
import { iperf3, PROBE_PORT, runProber, startProbeServers } from './fixtures/lab-helpers.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

t.test(
  'lab: 3 hosts, LAN 1gbit + thunderbolt p2p 5gbit, a black-holed and a foreign address',
  { skip: skipOrFail(Lab.unavailableReason()), timeout: 170_000 },
  async (t) => {
    const lab = await Lab.create({
      hosts: 3,
      lanRate: '1gbit',
      links: [
        { a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' },
        { a: 0, b: 2 },
      ],
    });
    t.teardown(() => lab.teardown());
    const profiles = await startProbeServers(lab, { lan0: 'ethernet', p2p1: 'thunderbolt' });
    t.same(
      profiles[1]?.map((i) => [i.name, i.type, i.ips.filter((ip) => ip.includes('.'))]),
      [
        ['lan0', 'ethernet', ['10.77.0.2']],
        ['p2p1', 'thunderbolt', ['10.77.1.2']],
      ],
      'labels from sysfs + overrides',
    );
    t.same(
      profiles[2]?.map((i) => [i.name, i.type]),
      [
        ['lan0', 'ethernet'],
        ['p2p2', 'unknown'],
      ],
      'unlabelled veth stays unknown',
    );

    await lab.cut(0, 2); // node-2's 10.77.2.2 now black-holes
    const addrs = (i: number): { ip: string; type: string }[] =>
      (profiles[i] ?? []).flatMap((f) => f.ips.filter((ip) => ip.includes('.')).map((ip) => ({ ip, type: f.type })));
    const peers = [
      { nodeId: 'node-1', port: PROBE_PORT, addresses: addrs(1) },
      // 10.77.0.2 is node-1's: claiming it for node-2 must never yield a node-2 link
      { nodeId: 'node-2', port: PROBE_PORT, addresses: [...addrs(2), { ip: '10.77.0.2', type: 'ethernet' }] },
    ];
    const timeoutMs = 1000;
    const out = await runProber(lab, 0, {
      peers,
      reach: { timeoutMs, retryDelayMs: 100 },
      measure: [
        { ip: lab.hosts[1]!.lanIp, port: PROBE_PORT },
        { ip: lab.linkIp(0, 1), port: PROBE_PORT },
      ],
    });
    const reach = out.filter((o) => o.kind === 'reach');
    const ok = reach
      .filter((o) => o.ok)
      .map((o) => `${o.nodeId}@${o.address}:${o.type}`)
      .sort();
    t.same(
      ok,
      ['node-1@10.77.0.2:ethernet', 'node-1@10.77.1.2:thunderbolt', 'node-2@10.77.0.3:ethernet'],
      'every working address, labelled',
    );
    t.match(
      reach.find((o) => o.reason === 'mismatch'),
      { address: '10.77.0.2', expectedNodeId: 'node-2', answeredBy: 'node-1' },
      'foreign address rejected',
    );
    t.notOk(reach.some((o) => o.ok && o.nodeId === 'node-2' && o.address === '10.77.0.2'));
    const hole = reach.find((o) => o.address === '10.77.2.2');
    t.match(hole, { ok: false, reason: 'unreachable', attempts: 3 }, 'black-holed address fails after 3 attempts');
    const first = reach[0]!.at as number;
    t.ok(first < timeoutMs / 2, `first verified result after ${first.toFixed(1)} ms (probe timeout ${timeoutMs} ms)`);
    t.ok(
      (hole!.at as number) >= 3 * timeoutMs,
      `black hole resolved last, after ${(hole!.at as number).toFixed(0)} ms`,
    );

    const measured = out.filter((o) => o.kind === 'measured');
    const lan = measured.find((o) => o.ip === lab.hosts[1]!.lanIp)!,
      tb = measured.find((o) => o.ip === lab.linkIp(0, 1))!;
    // The stream probe: the peer sends, the prober receives (iperf3 -R is the same direction).
    t.match(lan.report, { method: 'stream', streams: 1 }, 'measured with the raw TCP stream probe');
    t.match(tb.report, { method: 'stream' });
    const lanIperf = await iperf3(lab, 0, 1, lab.hosts[1]!.lanIp, 2, true);
    const tbIperf = await iperf3(lab, 0, 1, lab.linkIp(0, 1), 2, true);
    const g = (v: unknown): string => (typeof v === 'number' ? (v / 1e9).toFixed(2) : 'n/a');
    const ratio = (a: unknown, b: number | undefined): string =>
      typeof a === 'number' && b ? (a / b).toFixed(2) : 'n/a';
    t.comment(
      `LAN 1gbit: profiler ${g(lan.bps)} Gbit/s (rtt ${(lan.rttMs as number).toFixed(2)} ms), iperf3 -R ${g(lanIperf)} Gbit/s, ratio ${ratio(lan.bps, lanIperf)}`,
    );
    t.comment(
      `thunderbolt 5gbit: profiler ${g(tb.bps)} Gbit/s (rtt ${(tb.rttMs as number).toFixed(2)} ms), iperf3 -R ${g(tbIperf)} Gbit/s, ratio ${ratio(tb.bps, tbIperf)}`,
    );
    t.ok((tb.bps as number) > (lan.bps as number), 'thunderbolt measured faster than the LAN between the same pair');
  },
);
