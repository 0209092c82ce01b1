/**
 * Build or remove a lab by hand (root):
 *   node --import=... test/lab/cli.ts up --hosts 3 --lan-rate 1gbit --link 0-1:5gbit:thunderbolt   (Ctrl-C tears down)
 *   ... cli.ts list            lab namespaces on this machine and whether their owner is alive
 *   ... cli.ts sweep           removes labs whose owner process is gone
 *   ... cli.ts down <lab-id>   removes one lab's namespaces (e.g. tlab-1234-ab12c)
 * Compiled by `tsc -p tsconfig.bench.json` to build/test/lab/cli.js, which runs with plain node.
 */
import { Lab, sweepStaleLabs, type LinkSpec } from '../../src/lab/index.js';
import { parseLabNs } from '../../src/lab/plan.js';
import { destroyNetnsSync, listNetnsSync, pidAlive } from '../../src/lab/sh.js';

const [cmd, ...rest] = process.argv.slice(2);

function flag(name: string): string[] {
  const vals: string[] = [];
  for (let i = 0; i < rest.length; i++)
    if (rest[i] === name && rest[i + 1] !== undefined) vals.push(rest[++i] as string);
  return vals;
}

async function main(): Promise<void> {
  if (cmd === 'up') {
    const links: LinkSpec[] = flag('--link').map((s) => {
      const [pair, rate, label] = s.split(':');
      const [a, b] = (pair ?? '').split('-').map(Number);
      return { a: a ?? -1, b: b ?? -1, ...(rate ? { rate } : {}), ...(label ? { label } : {}) };
    });
    const lanRate = flag('--lan-rate')[0];
    const lab = await Lab.create({ hosts: Number(flag('--hosts')[0] ?? 2), ...(lanRate ? { lanRate } : {}), links });
    console.log(JSON.stringify({ id: lab.id, hosts: lab.hosts, links: lab.plan.links }, null, 2));
    console.log(`lab ${lab.id} is up; run: ip netns exec ${lab.hosts[0]?.ns} <cmd>. Ctrl-C tears it down.`);
    const keepAlive = setInterval(() => undefined, 1 << 30);
    const stop = (): void => {
      clearInterval(keepAlive);
      lab.teardownSync();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } else if (cmd === 'list') {
    for (const ns of listNetnsSync()) {
      const p = parseLabNs(ns);
      if (p) console.log(`${ns}\towner ${p.pid} ${pidAlive(p.pid) ? 'alive' : 'gone'}`);
    }
  } else if (cmd === 'sweep') {
    const removed = sweepStaleLabs(rest[0]);
    console.log(removed.length ? `removed ${removed.join(' ')}` : 'nothing stale');
  } else if (cmd === 'down' && rest[0]) {
    for (const ns of listNetnsSync())
      if (parseLabNs(ns)?.id === rest[0]) {
        destroyNetnsSync(ns);
        console.log(`removed ${ns}`);
      }
  } else {
    // Exit 0 on a bare run: the test runner picks up every file under test/ and must not count this as a failure.
    console.error(
      'usage: cli.ts up [--hosts N] [--lan-rate R] [--link A-B[:RATE[:LABEL]]]... | list | sweep [prefix] | down <lab-id>',
    );
    process.exitCode = cmd === undefined ? 0 : 2;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
