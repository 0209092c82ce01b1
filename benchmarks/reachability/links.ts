/** Link part of the reachability benchmark: profiler estimate vs iperf3 on shaped lab links (needs root). */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Lab } from '../../src/lab/index.js';
import { childExecArgv, siblingModule } from '../../src/runtime/module-url.js';

export interface LinkRow {
  link: string;
  rate: string;
  profilerBps: number;
  iperfBps: number | undefined;
  rttMs: number;
}

function firstJson(child: ChildProcess): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => {
      rl.close();
      resolve(JSON.parse(l) as Record<string, unknown>);
    });
    child.once('exit', (code) => reject(new Error(`agent exited ${code}`)));
  });
}

export async function linkBench(quick: boolean): Promise<LinkRow[]> {
  const why = Lab.unavailableReason();
  if (why) {
    console.error(`--links skipped: ${why}`);
    return [];
  }
  const agent = fileURLToPath(siblingModule(import.meta.url, './agent'));
  const node = (lab: Lab, host: number, ...a: string[]): ChildProcess =>
    lab.spawn(host, process.execPath, [...childExecArgv(import.meta.url), agent, ...a], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  const lab = await Lab.create({
    hosts: 2,
    lanRate: '1gbit',
    links: [{ a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' }],
  });
  try {
    await firstJson(node(lab, 1, 'server', 'node-1', '7700'));
    const rows: LinkRow[] = [];
    for (const [link, ip, rate] of [
      ['LAN (tbf both ends)', lab.hosts[1]!.lanIp, '1gbit'],
      ['p2p "thunderbolt"', lab.linkIp(0, 1), '5gbit'],
    ] as const) {
      const m = await firstJson(node(lab, 0, 'measure', ip, '7700', quick ? '250' : '400'));
      let iperfBps: number | undefined;
      try {
        const server = lab.spawn(1, 'iperf3', ['-s', '-1', '-B', ip, '-p', '5302'], { stdio: 'ignore' });
        await new Promise((r) => setTimeout(r, 300));
        const { stdout } = await lab.exec(0, ['iperf3', '-c', ip, '-p', '5302', '-t', quick ? '2' : '4', '-J', '-R'], {
          timeoutMs: 20_000,
        });
        server.kill();
        iperfBps = (JSON.parse(stdout) as { end?: { sum_received?: { bits_per_second?: number } } }).end?.sum_received
          ?.bits_per_second;
      } catch {
        iperfBps = undefined; // iperf3 not installed
      }
      rows.push({ link, rate, profilerBps: m.bps as number, iperfBps, rttMs: m.rttMs as number });
    }
    return rows;
  } finally {
    await lab.teardown();
  }
}
