/**
 * What the benchmark compares torus with on the same links: iperf3 (the link's capacity for the same bytes; a raw
 * Node TCP stream when iperf3 is missing) and rsync (what a user does today: `rsync --daemon` in the source's
 * namespace, as without sshd, and `rsync rsync://…` on each receiver in turn).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { basename, dirname, join } from 'node:path';
import type { Lab } from '../../src/lab/index.js';

/** Seconds to move `bytes` from host `from` to `toIp` (an address of the receiving host `to`). */
export async function rawLink(
  lab: Lab,
  from: number,
  to: number,
  toIp: string,
  bytes: number,
  port = 5299,
): Promise<{ tool: string; seconds: number }> {
  if (existsSync('/usr/bin/iperf3')) {
    const server = lab.spawn(to, 'iperf3', ['-s', '-1', '-p', String(port)]);
    await new Promise((r) => setTimeout(r, 500));
    const out = await lab.exec(from, ['iperf3', '-c', toIp, '-p', String(port), '-n', String(bytes), '-J'], {
      timeoutMs: 300_000,
    });
    server.kill();
    const j = JSON.parse(out.stdout) as { end: { sum_received: { seconds: number } } };
    return { tool: 'iperf3', seconds: j.end.sum_received.seconds };
  }
  const sink = lab.spawn(to, process.execPath, [
    '-e',
    `const n=require('node:net');n.createServer((c)=>{let b=0,t0=0;c.on('data',(d)=>{if(!t0)t0=performance.now();b+=d.length});c.on('end',()=>{console.log(JSON.stringify({b,ms:performance.now()-t0}));process.exit(0)})}).listen(${port},()=>console.log('{"ready":1}'))`,
  ]);
  const lines = createInterface({ input: sink.stdout! });
  let ready: () => void = () => {};
  const isReady = new Promise<void>((r) => {
    ready = r;
  });
  let got: (s: string) => void = () => {};
  const result = new Promise<string>((r) => {
    got = r;
  });
  lines.on('line', (l) => {
    if (l.includes('ready')) ready();
    else got(l);
  });
  await isReady;
  const sender = lab.spawn(from, process.execPath, [
    '-e',
    `const n=require('node:net');const buf=Buffer.alloc(1<<20);let left=${bytes};const c=n.connect(${port},'${toIp}',()=>{const w=()=>{while(left>0){left-=buf.length;if(!c.write(buf)){c.once('drain',w);return}}c.end()};w()})`,
  ]);
  const r = JSON.parse(await result) as { b: number; ms: number };
  sender.kill();
  return { tool: 'raw TCP (Node)', seconds: r.ms / 1000 };
}

/**
 * Seconds for the three hops h0 → h1, h1 → h2, h2 → h3 to each carry `bytes` at the same time (iperf3 on each hop,
 * started together; the slowest decides): what the lab itself can carry while a chain broadcast runs. On a machine
 * with fewer cores than the lab has busy hosts this is the ceiling a chain can reach, whatever its code does.
 */
export async function rawChain(
  lab: Lab,
  ipOf: (to: number) => string,
  bytes: number,
): Promise<{ tool: string; seconds: number }> {
  const hops = await Promise.all([1, 2, 3].map((to) => rawLink(lab, to - 1, to, ipOf(to), bytes, 5300 + to)));
  return { tool: hops[0]!.tool, seconds: Math.max(...hops.map((h) => h.seconds)) };
}

export const rsyncAvailable = (): boolean => existsSync('/usr/bin/rsync');

export interface RsyncDaemon {
  /** Seconds for host `to` to copy the file from the daemon at `ip` (a fresh destination each time). */
  copy(to: number, ip: string): Promise<number>;
  stop(): void;
}

/** `rsync --daemon` on host `from`, serving the directory of `file` read-only. */
export async function rsyncDaemon(lab: Lab, from: number, file: string, scratch: string): Promise<RsyncDaemon> {
  const conf = join(scratch, 'rsyncd.conf');
  writeFileSync(
    conf,
    `port = 8730\nuse chroot = no\nreverse lookup = no\naddress = 0.0.0.0\npid file = ${join(scratch, `rsyncd-${from}-${Date.now()}.pid`)}\nlog file = ${join(scratch, 'rsyncd.log')}\n[bench]\npath = ${dirname(file)}\nread only = yes\nuid = root\ngid = root\n`,
  );
  // stdin must not be a socket (Node's pipes are socketpairs): rsync would take itself for an inetd child.
  const daemon = lab.spawn(from, 'rsync', ['--daemon', '--no-detach', `--config=${conf}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  daemon.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  for (let i = 0; ; i++) {
    const listening = await lab.exec(from, ['rsync', 'rsync://127.0.0.1:8730/']).then(
      () => true,
      (e: Error) => {
        stderr = e.message;
        return false;
      },
    );
    if (listening) break;
    if (i >= 50 || daemon.exitCode !== null)
      throw new Error(
        `rsync --daemon did not start on h${from} (exit ${daemon.exitCode}): ${stderr} ${existsSync(join(scratch, 'rsyncd.log')) ? readFileSync(join(scratch, 'rsyncd.log'), 'utf8') : ''}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
  let n = 0;
  return {
    async copy(to, ip) {
      const dest = join(scratch, `rsync-${to}-${n++}`);
      mkdirSync(dest, { recursive: true });
      const t0 = performance.now();
      try {
        await lab.exec(to, ['rsync', '-a', `rsync://${ip}:8730/bench/${basename(file)}`, `${dest}/`], {
          timeoutMs: 600_000,
        });
        return (performance.now() - t0) / 1000;
      } finally {
        rmSync(dest, { recursive: true, force: true });
      }
    },
    stop() {
      daemon.kill();
    },
  };
}
