/**
 * Golden transcript of the agreement core on a simulated network (no clock, no sockets): role changes, closes and
 * applied indices in order. Regenerate with TORUS_UPDATE_GOLDEN=1 after an intended behaviour change, and review the diff.
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SimNet } from './fixtures/sim-net.js';

const golden = fileURLToPath(new URL('./fixtures/election.transcript.txt', import.meta.url));

t.test('election, sequencing, leader crash, rejoin: transcript', async (t) => {
  const net = new SimNet();
  const out: string[] = [];
  const mark = (title: string) => {
    out.push(`## ${title}`, ...net.transcript.splice(0));
    for (const [id, n] of [...net.nodes].sort())
      if (n.alive)
        out.push(
          `   ${id}: ${n.state.role} term=${n.state.term} leader=${n.state.leader ?? '-'} applied=${n.applied.map((e) => e.index).join(',') || '-'}`,
        );
  };
  net.add('a', 100);
  net.add('b', 200);
  net.add('c', 300);
  net.mesh();
  net.run(1000);
  mark('cold start: a is the longest-lived');
  net.propose([
    { type: 'E', n: 1 },
    { type: 'E', n: 2 },
  ]);
  net.run(200);
  mark('a sequences two events');
  net.filter = (_f, to, f) => !(f.type === 'append' && to === 'b');
  net.propose([{ type: 'E', n: 3 }]);
  net.filter = () => true;
  mark('only c receives event 3');
  net.kill('a');
  net.run(4000);
  mark('a crashes: c holds the most complete log and takes over; b catches up');
  net.add('a', 5000);
  net.mesh();
  net.run(1500);
  mark('a restarts (younger now): follows c, gets a snapshot');
  const text = `${out.join('\n')}\n`;
  if (process.env.TORUS_UPDATE_GOLDEN === '1') writeFileSync(golden, text);
  t.equal(text, readFileSync(golden, 'utf8'));
});
