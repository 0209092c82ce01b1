/**
 * Probe accuracy: the profiler's capacity estimate vs iperf3 on the same shaped lab links, side by side
 * in one run. A 3-host lab: LAN at 1gbit (tbf on both ends, as src/lab shapes it), a p2p link h0–h1 at 5gbit
 * (tbf both ends, burst as docs/lab.md sizes it), a p2p link h0–h2 unshaped. Per link and round, back to back:
 *   stream   the profiler's probe as the worker runs it (GET /v1/probe/stream, best of 2 × 300 ms, 1 connection)
 *   upload   the previous probe (HTTP upload to /v1/probe/sink, best of 2 × 300 ms), for comparison
 *   iperf3   -R (the peer sends, the stream probe's direction) and forward, 2 s each
 * Ratios: stream / iperf3 -R, upload / iperf3 forward (each against the same direction). Needs root and iperf3.
 * `--load N` runs N busy-loop processes during the rounds (CPU contention as on a busy shared machine: the old
 * upload probe degrades there, iperf3 and the stream probe much less).
 *   node build/benchmarks/probe-accuracy/index.js [--quick] [--json] [--rounds N] [--streams N] [--repeats N] [--load N]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { childExecArgv, siblingModule } from '../../src/runtime/module-url.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const flag = (name: string, dflt: number): number => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const rounds = flag('--rounds', quick ? 1 : 3);
const streams = flag('--streams', 1);
const load = flag('--load', 0);
const repeats = flag('--repeats', 2);
const iperfSeconds = quick ? 1 : 2;
const PORT = 7700;

interface Sample {
  link: string;
  rate: string;
  round: number;
  stream: number;
  upload: number;
  iperfR?: number | undefined;
  iperfF?: number | undefined;
}

function firstJson(child: ChildProcess, timeoutMs = 30_000): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('agent: no answer in time'));
    }, timeoutMs);
    rl.once('line', (l) => {
      clearTimeout(timer);
      rl.close();
      resolve(JSON.parse(l) as Record<string, number>);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agent exited ${code}`));
    });
  });
}

async function iperf3(lab: Lab, to: number, ip: string, reverse: boolean): Promise<number | undefined> {
  const server = lab.spawn(to, 'iperf3', ['-s', '-1', '-B', ip, '-p', '5302'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 300));
    const { stdout } = await lab.exec(
      0,
      ['iperf3', '-c', ip, '-p', '5302', '-t', String(iperfSeconds), '-J', ...(reverse ? ['-R'] : [])],
      { timeoutMs: 30_000 },
    );
    return (JSON.parse(stdout) as { end?: { sum_received?: { bits_per_second?: number } } }).end?.sum_received
      ?.bits_per_second;
  } catch {
    return undefined;
  } finally {
    server.kill();
  }
}

async function main(): Promise<Sample[]> {
  const why = Lab.unavailableReason();
  if (why) throw new Error(`probe-accuracy needs the lab: ${why}`);
  const agent = fileURLToPath(siblingModule(import.meta.url, './agent'));
  const run = (lab: Lab, host: number, ...a: string[]): ChildProcess =>
    lab.spawn(host, process.execPath, [...childExecArgv(import.meta.url), agent, ...a], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  const lab = await Lab.create({
    hosts: 3,
    lanRate: '1gbit',
    links: [
      { a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' },
      { a: 0, b: 2 },
    ],
  });
  const servers: ChildProcess[] = [];
  const hogs = Array.from({ length: load }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  try {
    for (const h of [1, 2]) {
      const s = run(lab, h, 'server', `node-${h}`, String(PORT));
      servers.push(s);
      await firstJson(s);
    }
    const links = [
      ['LAN', lab.hosts[1]!.lanIp, '1gbit', 1],
      ['p2p "thunderbolt"', lab.linkIp(0, 1), '5gbit', 1],
      ['p2p', lab.linkIp(0, 2), 'none', 2],
    ] as const;
    const samples: Sample[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const [link, ip, rate, host] of links) {
        const stream = (
          await firstJson(run(lab, 0, 'measure', ip, String(PORT), '300', String(repeats), String(streams)))
        ).bps!;
        const iperfR = await iperf3(lab, host, ip, true);
        const upload = (await firstJson(run(lab, 0, 'upload', ip, String(PORT), '300', '2'))).bps!;
        const iperfF = await iperf3(lab, host, ip, false);
        samples.push({ link, rate, round, stream, upload, iperfR, iperfF });
        process.stderr.write(
          `round ${round} ${link}: stream ${(stream / 1e9).toFixed(2)} iperf3 -R ${iperfR ? (iperfR / 1e9).toFixed(2) : 'n/a'} | upload ${(upload / 1e9).toFixed(2)} iperf3 ${iperfF ? (iperfF / 1e9).toFixed(2) : 'n/a'} Gbit/s\n`,
        );
      }
    }
    return samples;
  } finally {
    for (const s of [...servers, ...hogs]) s.kill();
    await lab.teardown();
  }
}

const samples = await main();
const g = (v: number | undefined): string => (v === undefined ? 'n/a' : (v / 1e9).toFixed(2));
const ratio = (a: number, b: number | undefined): number | undefined => (b ? a / b : undefined);
const range = (xs: (number | undefined)[]): string => {
  const v = xs.filter((x): x is number => x !== undefined);
  return v.length === 0
    ? 'n/a'
    : v.length === 1
      ? v[0]!.toFixed(2)
      : `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}`;
};
if (argv.includes('--json')) {
  console.log(JSON.stringify({ rounds, streams, iperfSeconds, load, samples }, null, 2));
} else {
  console.log(
    `# probe accuracy: profiler capacity probe vs iperf3 on the same lab link, back to back; ${rounds} round(s); stream probe = best of ${repeats} × 300 ms, ${streams} connection(s); iperf3 ${iperfSeconds} s${load ? `; ${load} CPU hog(s) running` : ''}`,
  );
  console.log('link                tbf    round  stream (Gbit/s)  iperf3 -R  ratio | old upload  iperf3  ratio');
  for (const s of samples) {
    const r1 = ratio(s.stream, s.iperfR),
      r2 = ratio(s.upload, s.iperfF);
    console.log(
      `${s.link.padEnd(19)} ${s.rate.padEnd(6)} ${String(s.round).padStart(5)}  ${g(s.stream).padStart(15)}  ${g(s.iperfR).padStart(9)}  ${(r1?.toFixed(2) ?? 'n/a').padStart(5)} | ${g(s.upload).padStart(10)}  ${g(s.iperfF).padStart(6)}  ${(r2?.toFixed(2) ?? 'n/a').padStart(5)}`,
    );
  }
  console.log('\n# ratio range over the rounds');
  console.log('link                tbf    stream / iperf3 -R   old upload / iperf3');
  for (const link of [...new Set(samples.map((s) => s.link))]) {
    const ss = samples.filter((s) => s.link === link);
    console.log(
      `${link.padEnd(19)} ${ss[0]!.rate.padEnd(6)} ${range(ss.map((s) => ratio(s.stream, s.iperfR))).padStart(18)}   ${range(ss.map((s) => ratio(s.upload, s.iperfF))).padStart(19)}`,
    );
  }
}
