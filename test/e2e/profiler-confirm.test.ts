/**
 * Regression test for a bug found end to end (test/e2e/cluster-profile.test.ts): link speeds measured while a
 * cluster forms read low on a busy machine (a 5 Gbit/s thunderbolt link at 0.48 Gbit/s, below the 1 Gbit/s LAN).
 * The profiler now measures each new link once more when things have settled and keeps the better sample
 * (src/actors/network-profiler/confirm.ts). Pure, no lab.
 */
import t from 'tap';
import { MeasurementConfirmer, type ConfirmTimer } from '../../src/actors/network-profiler/confirm.js';

/** A timer driven by the test: `advance(ms)` fires what falls due, so no assertion races a real clock. */
function manualTimer(): ConfirmTimer & { advance(ms: number): void } {
  let now = 0;
  const due = new Map<number, { at: number; fire: () => void }>();
  let next = 0;
  return {
    set: (fire, ms) => (due.set(++next, { at: now + ms, fire }), next),
    clear: (handle) => void due.delete(handle as number),
    advance(ms) {
      now += ms;
      for (const [id, d] of [...due].sort((a, b) => a[1].at - b[1].at)) {
        if (d.at > now) continue;
        due.delete(id);
        d.fire();
      }
    },
  };
}

const measured = (sink: string, ip: string, bandwidthBps: number, rttMs: number) => ({ type: 'LinkMeasured', sink, ip, bandwidthBps, rttMs });

t.test('each new link is confirmed once, after the last new link, keeping the better sample', async (t) => {
  const asked: string[] = [];
  const clock = manualTimer();
  const c = new MeasurementConfirmer(80, clock);
  t.teardown(() => c.stop());
  c.start((sink, ip) => asked.push(`${sink}|${ip}`));
  c.observe(measured('b', '10.0.0.2', 4e8, 20));
  clock.advance(50);
  c.observe(measured('c', '10.0.0.3', 9e8, 1));
  clock.advance(50);
  t.same(asked, [], 'the timer restarts with every new link');
  clock.advance(30);
  t.same(asked.sort(), ['b|10.0.0.2', 'c|10.0.0.3'], 'both confirmed in one pass');

  t.same(c.combine('b|10.0.0.2', { bandwidthBps: 4.2e9, rttMs: 30 }), { bandwidthBps: 4.2e9, rttMs: 20 }, 'higher bandwidth and lower RTT of the two samples');
  t.same(c.combine('c|10.0.0.3', { bandwidthBps: 1e8, rttMs: 50 }), { bandwidthBps: 9e8, rttMs: 1 }, 'a noisier confirmation does not spoil a good first sample');
  t.same(c.combine('c|10.0.0.3', { bandwidthBps: 1e8, rttMs: 50 }), { bandwidthBps: 1e8, rttMs: 50 }, 'later measurements (on request) are reported as they are');

  c.observe(measured('b', '10.0.0.2', 1e8, 9));
  clock.advance(120);
  t.same(asked.length, 2, 'a confirmed link is not confirmed again (never continuous)');

  c.observe({ type: 'LinkDown', sink: 'b', ip: '10.0.0.2' });
  c.observe({ type: 'LinkUp', sink: 'b', ip: '10.0.0.2' });
  c.observe(measured('b', '10.0.0.2', 1e8, 9));
  clock.advance(120);
  t.same(asked.slice(2), ['b|10.0.0.2'], 'a link found again is confirmed again');
});

t.test('delay 0 turns confirmation off', async (t) => {
  const asked: string[] = [];
  const clock = manualTimer();
  const c = new MeasurementConfirmer(0, clock);
  c.start((sink, ip) => asked.push(`${sink}|${ip}`));
  c.observe(measured('b', '10.0.0.2', 4e8, 20));
  clock.advance(1000);
  t.same(asked, []);
  t.same(c.combine('b|10.0.0.2', { bandwidthBps: 1, rttMs: 2 }), { bandwidthBps: 1, rttMs: 2 });
});
