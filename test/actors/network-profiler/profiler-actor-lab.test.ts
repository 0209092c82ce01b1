import t from 'tap';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../../src/lab/index.js';
import { childExecArgv } from '../../../src/runtime/module-url.js';
import { lines, PROBE_PORT, startProbeServers } from './fixtures/lab-helpers.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

t.test(
  'the profiler actor in a lab: links up, measured, and a cut link goes down within the probe interval',
  { skip: skipOrFail(Lab.unavailableReason()), timeout: 170_000 },
  async (t) => {
    const lab = await Lab.create({
      hosts: 3,
      lanRate: '1gbit',
      links: [{ a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' }],
    });
    t.teardown(() => lab.teardown());
    // Probe servers on hosts 1 and 2 only; host 0 runs the profiler node (which serves its own probe routes).
    const profiles = await startProbeServers(lab, { lan0: 'ethernet', p2p1: 'thunderbolt' });
    lab.processes[0]?.kill('SIGKILL'); // host 0's plain probe server: the profiler node takes its place
    await new Promise((r) => setTimeout(r, 300));
    const addrs = (i: number): { ip: string; type: string }[] =>
      (profiles[i] ?? []).flatMap((f) => f.ips.filter((ip) => ip.includes('.')).map((ip) => ({ ip, type: f.type })));
    const probeIntervalMs = 2000,
      probeTimeoutMs = 400,
      attempts = 3;
    const job = {
      nodeId: 'node-0',
      port: PROBE_PORT,
      peers: [
        { nodeId: 'node-1', port: PROBE_PORT, addresses: addrs(1) },
        { nodeId: 'node-2', port: PROBE_PORT, addresses: addrs(2) },
      ],
      options: {
        probeIntervalMs,
        probeTimeoutMs,
        attempts,
        throughputMs: 400,
        ifaceTypes: { lan0: 'ethernet', p2p1: 'thunderbolt' },
      },
    };
    const script = fileURLToPath(new URL('./fixtures/profiler-node.ts', import.meta.url));
    const node = lab.spawn(0, process.execPath, [...childExecArgv(import.meta.url), script, JSON.stringify(job)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const events: { at: number; wall: number; event: Record<string, unknown> }[] = [];
    const states = new Set<string>();
    let waiters: (() => void)[] = [];
    const done = lines(node, (o) => {
      if (o.event)
        events.push({ at: o.at as number, wall: performance.now(), event: o.event as Record<string, unknown> });
      if (o.snapshot) states.add(JSON.stringify((o.snapshot as { value: unknown }).value));
      for (const w of waiters) w();
    });
    const waitFor = async (pred: () => boolean, ms: number): Promise<boolean> => {
      const end = performance.now() + ms;
      while (!pred()) {
        if (performance.now() > end) return false;
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
        waiters = [];
      }
      return true;
    };
    const of = (type: string) => events.filter((e) => e.event.type === type).map((e) => e.event);
    // Three distinct links, not three events: a link measured twice before the third came up once passed this wait early.
    const measuredLinks = () => new Set(of('LinkMeasured').map((e) => `${e.sink}@${e.ip}`)).size;
    t.ok(await waitFor(() => measuredLinks() >= 3 && of('LinkUp').length >= 3, 90_000), 'three links up and measured');
    t.same(
      of('LinkUp')
        .map((e) => `${e.sink}@${e.ip}:${e.linkType}`)
        .sort(),
      ['node-1@10.77.0.2:ethernet', 'node-1@10.77.1.2:thunderbolt', 'node-2@10.77.0.3:ethernet'],
    );
    const bw = (ip: string): number => (of('LinkMeasured').find((e) => e.ip === ip)?.bandwidthBps as number) ?? 0;
    t.comment(
      `measured by the actor: LAN ${(bw('10.77.0.2') / 1e9).toFixed(2)} Gbit/s, thunderbolt ${(bw('10.77.1.2') / 1e9).toFixed(2)} Gbit/s`,
    );
    t.ok(bw('10.77.1.2') > bw('10.77.0.2'), 'thunderbolt faster than LAN');
    t.ok(of('NodeProfileUpdated').length >= 1, 'own profile announced');
    t.match(of('NodeProfileUpdated')[0], {
      nodeId: 'node-0',
      interfaces: [
        { name: 'lan0', type: 'ethernet' },
        { name: 'p2p1', type: 'thunderbolt' },
      ],
    });

    const measuredBefore = of('LinkMeasured').length;
    await new Promise((r) => setTimeout(r, probeIntervalMs * 2));
    t.equal(of('LinkMeasured').length, measuredBefore, 'no re-measurement without a change or a request');

    await lab.cut(0, 1);
    const cutAt = performance.now();
    const bound = probeIntervalMs + attempts * probeTimeoutMs + attempts * 100 + 1500;
    t.ok(await waitFor(() => of('LinkDown').length > 0, bound + 5000), 'LinkDown after the cut');
    const down = events.find((e) => e.event.type === 'LinkDown')!;
    const latency = down.wall - cutAt;
    t.match(down.event, { sink: 'node-1', ip: '10.77.1.2' });
    t.comment(
      `LinkDown ${latency.toFixed(0)} ms after the cut (interval ${probeIntervalMs} ms + ${attempts} × ${probeTimeoutMs} ms attempts)`,
    );
    t.ok(latency <= bound, `within the probe interval plus the bounded attempts (${bound} ms)`);
    t.equal(of('LinkDown').length, 1, 'only the cut link went down');

    node.stdin!.write(`${JSON.stringify({ type: 'measure', sink: 'node-2' })}\n`);
    t.ok(await waitFor(() => of('LinkMeasured').length > measuredBefore, 20_000), 're-measured on request');
    t.ok(
      [...states].some((s) => s.includes('probing')) && [...states].some((s) => s.includes('measuring')),
      `states seen: ${[...states].join(' ')}`,
    );
    node.kill('SIGTERM');
    await done.catch(() => undefined);
  },
);
