import t from 'tap';
import { once } from 'node:events';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Lab, listNetns, planLab, sweepStaleLabs, tbfArgs, tbfBurstBytes, withLab } from '../../src/lab/index.js';
import { parseLabNs } from '../../src/lab/plan.js';
import { run } from '../../src/lab/sh.js';
import { childExecArgv } from '../../src/runtime/module-url.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const noLab = skipOrFail(Lab.unavailableReason());
const TOOL = fileURLToPath(new URL('./fixtures/net-tool.mjs', import.meta.url));

/**
 * Resolves with the first JSON line a child prints (rejects if it exits first or after a timeout). 20 s: a Node
 * process starting in a namespace took over 5 s on a 2-core machine at load 13, which failed this test.
 */
function firstLine(child: ChildProcess, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('no output in time')), timeoutMs);
    rl.once('line', (line) => {
      clearTimeout(timer);
      rl.close();
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before output`));
    });
  });
}

async function rootLinks(): Promise<string[]> {
  return (await run('ip', ['-o', 'link', 'show'])).stdout
    .split('\n')
    .map((l) => l.split(':')[1]?.trim() ?? '')
    .filter(Boolean)
    .sort();
}

t.test('address plan, names and tbf bursts (pure)', async (t) => {
  const plan = planLab(
    {
      hosts: 3,
      lanRate: '1gbit',
      links: [
        { a: 0, b: 1, rate: '5gbit' },
        { a: 1, b: 2 },
      ],
    },
    4242,
    'ab1',
  );
  t.equal(plan.id, 'tlab-4242-ab1');
  t.same(
    plan.hosts.map((h) => h.lanIp),
    ['10.77.0.1', '10.77.0.2', '10.77.0.3'],
  );
  t.same(
    plan.links.map((l) => [l.ipA, l.ipB]),
    [
      ['10.77.1.1', '10.77.1.2'],
      ['10.77.2.1', '10.77.2.2'],
    ],
  );
  t.same(parseLabNs('tlab-4242-ab1-h2'), { id: 'tlab-4242-ab1', pid: 4242 });
  t.same(parseLabNs('tlab-4242-ab1-sw'), { id: 'tlab-4242-ab1', pid: 4242 });
  t.equal(parseLabNs('other-ns'), undefined);
  t.equal(tbfBurstBytes(1e9), 1 << 20, '1 MiB at 1 Gbit/s');
  t.ok(tbfBurstBytes(10e9) >= 4e6, '>= 4 MB at 10 Gbit/s');
  t.same(
    tbfArgs('100mbit', 131072),
    ['tbf', 'rate', '100mbit', 'burst', '131072', 'latency', '50ms'],
    'a given bucket',
  );
  t.equal(tbfArgs('1gbit')[4], String(1 << 20), 'default bucket');
  t.throws(() => tbfArgs('1gbit', 64 * 1024), /burst must be/, 'below two GSO packets refused');
  t.throws(() => planLab({ hosts: 2, links: [{ a: 0, b: 2 }] }, 1, 'x'), /link 0/);
  t.throws(() => planLab({ hosts: 2, lanRate: 'fast' }, 1, 'x'), /bad rate/);
});

t.test('3 hosts: bridge, p2p link, multicast, cut/restore, shaping, teardown', { skip: noLab }, async (t) => {
  const before = await rootLinks();
  const lab = await Lab.create({ hosts: 3, links: [{ a: 0, b: 1 }] });
  t.teardown(() => lab.teardown());
  t.same(await rootLinks(), before, 'nothing created in the root namespace');
  t.same(
    lab.hosts.map((h) => h.lanIp),
    ['10.77.0.1', '10.77.0.2', '10.77.0.3'],
  );
  t.equal(lab.linkIp(0, 1), '10.77.1.2');
  t.same(lab.hosts[1]?.ips, ['10.77.0.2', '10.77.1.2']);
  // A process started the moment create() resolves sees every address: each link already has carrier (a fresh
  // veth end stays operationally down for up to a second, and Node's interface list then leaves it out).
  for (const h of lab.hosts) {
    const { stdout } = await run('ip', [
      'netns',
      'exec',
      h.ns,
      process.execPath,
      '-e',
      "console.log(JSON.stringify(Object.values(require('os').networkInterfaces()).flat().map((a) => a.address)))",
    ]);
    const listed = JSON.parse(stdout) as string[];
    t.same(
      h.ips.filter((ip) => !listed.includes(ip)),
      [],
      `${h.name}: every address listed at once`,
    );
  }

  const echo = lab.spawn(1, process.execPath, [TOOL, 'echo-server', '7100']);
  t.same(await firstLine(echo), { listening: 7100 });
  const reach = async (ip: string): Promise<boolean> => {
    const c = lab.spawn(0, process.execPath, [TOOL, 'echo-client', ip, '7100']);
    const [code] = (await once(c, 'exit')) as [number];
    return code === 0;
  };
  t.ok(await reach(lab.hosts[1]!.lanIp), 'h0 reaches h1 over the bridge');
  t.ok(await reach(lab.linkIp(0, 1)), 'h0 reaches h1 over the point-to-point link');

  await t.test('multicast from h0 reaches h1 and h2; blocked host hears nothing', async (t) => {
    const recv = [1, 2].map((h) => lab.spawn(h, process.execPath, [TOOL, 'mcast-recv', '239.255.77.1', '7200']));
    for (const r of recv) t.same(await firstLine(r), { listening: 7200 });
    const got = recv.map((r) => firstLine(r));
    lab.spawn(0, process.execPath, [TOOL, 'mcast-send', '239.255.77.1', '7200', 'hello', '10']);
    for (const g of got) t.same(await g, { got: 'hello', from: '10.77.0.1' });

    await lab.blockMulticast(2);
    const r1 = lab.spawn(1, process.execPath, [TOOL, 'mcast-recv', '239.255.77.1', '7201']);
    const r2 = lab.spawn(2, process.execPath, [TOOL, 'mcast-recv', '239.255.77.1', '7201']);
    await firstLine(r1);
    await firstLine(r2);
    // Settle h2's outcome right away (heard or silent after 4 s), so a slow h1 cannot leave it unhandled.
    const g1 = firstLine(r1, 10_000),
      // Silent means no line within 4 s while it runs; an exit (a crashed receiver) is not silence.
      g2 = firstLine(r2, 4000).then(
        () => 'heard',
        (error: Error) => (error.message === 'no output in time' ? 'silent' : error.message),
      );
    lab.spawn(0, process.execPath, [TOOL, 'mcast-send', '239.255.77.1', '7201', 'again', '10']);
    t.same(await g1, { got: 'again', from: '10.77.0.1' }, 'h1 still hears multicast');
    t.equal(await g2, 'silent', 'h2 (blocked) hears nothing');
    await lab.blockMulticast(2, false);
    r2.kill();
  });

  await t.test('cut black-holes the link, restore brings it back; LAN keeps working', async (t) => {
    await lab.cut(0, 1);
    const t0 = Date.now();
    t.notOk(await reach(lab.linkIp(0, 1)), 'cut link does not connect');
    t.ok(Date.now() - t0 >= 1500, 'a black hole: no immediate error, the client waits for its timeout');
    t.ok(await reach(lab.hosts[1]!.lanIp), 'LAN still works');
    await lab.restore(0, 1);
    t.ok(await reach(lab.linkIp(0, 1)), 'restored');
    await lab.cut(2, 'lan');
    t.notOk(await reach(lab.hosts[2]!.lanIp), 'h2 cut off the LAN');
    await lab.restore(2, 'lan');
  });

  await t.test('shaping limits throughput', async (t) => {
    const sink = lab.spawn(1, process.execPath, [TOOL, 'sink', '7300']);
    await firstLine(sink);
    const measure = async (bytes: number): Promise<number> => {
      const result = firstLine(sink, 30_000);
      const s = lab.spawn(0, process.execPath, [TOOL, 'send', lab.hosts[1]!.lanIp, '7300', String(bytes)]);
      const r = await result;
      await once(s, 'exit');
      return r.mbps as number;
    };
    const unshaped = await measure(200 << 20);
    await lab.setRate(0, 'lan', '200mbit');
    const shaped = await measure(20 << 20);
    t.comment(`LAN h0→h1: unshaped ${unshaped.toFixed(0)} Mbit/s, tbf 200mbit ${shaped.toFixed(0)} Mbit/s`);
    t.ok(shaped < unshaped / 2, 'shaped clearly below unshaped');
    t.ok(shaped > 100 && shaped < 260, `shaped 200mbit measures within 100..260 Mbit/s (${shaped.toFixed(0)})`);
    await lab.setRate(0, 'lan', undefined);
  });

  const procs = lab.processes.length;
  t.ok(procs > 0, 'lab tracks its processes');
  await lab.teardown();
  await lab.teardown();
  t.equal(lab.processes.length, 0, 'every spawned process is gone');
  t.ok(echo.exitCode !== null || echo.signalCode !== null || (await once(echo, 'exit')), 'echo server killed');
  t.same(
    (await listNetns()).filter((n) => n.startsWith(lab.id)),
    [],
    'no namespace left',
  );
  t.same(await rootLinks(), before, 'no veth or bridge in the root namespace');
});

t.test('withLab tears down in t.teardown', { skip: noLab }, async (t) => {
  let id = '';
  await t.test('inner', async (t) => {
    await withLab(t, { hosts: 2 }, async (lab) => {
      id = lab.id;
      t.equal((await listNetns()).filter((n) => n.startsWith(lab.id)).length, 3);
    });
  });
  t.ok(id, 'the inner test built a lab');
  t.same(
    (await listNetns()).filter((n) => n.startsWith(id)),
    [],
    'gone after the subtest',
  );
});

t.test('a lab owner killed by a signal tears down; a SIGKILLed one is swept', { skip: noLab }, async (t) => {
  const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));
  const start = async (): Promise<{ child: ChildProcess; id: string }> => {
    const child = spawn(process.execPath, [...childExecArgv(import.meta.url), cli, 'up', '--hosts', '2'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    let text = '';
    for await (const chunk of child.stdout!) {
      text += String(chunk);
      if (text.includes('is up')) break;
    }
    const id = /"id": "([^"]+)"/.exec(text)?.[1] ?? '';
    return { child, id };
  };
  const a = await start();
  t.ok(a.id && parseLabNs(`${a.id}-sw`), `lab ${a.id} built by a child`);
  a.child.kill('SIGTERM');
  await once(a.child, 'exit');
  t.same(
    (await listNetns()).filter((n) => n.startsWith(a.id)),
    [],
    'SIGTERM: exit handler tore it down',
  );

  const b = await start();
  b.child.kill('SIGKILL');
  await once(b.child, 'exit');
  t.equal((await listNetns()).filter((n) => n.startsWith(b.id)).length, 3, 'SIGKILL leaves namespaces behind');
  const removed = sweepStaleLabs();
  t.ok(removed.includes(`${b.id}-sw`), 'sweep removes the stale lab');
  t.same(
    (await listNetns()).filter((n) => n.startsWith(b.id)),
    [],
    'nothing of it left',
  );
});
