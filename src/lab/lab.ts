/**
 * A real multi-host network on one Linux machine, built from network namespaces (tests and benchmarks).
 * N hosts share a LAN bridge that lives in its own namespace; optional point-to-point veth links join chosen
 * pairs; every link can be rate-shaped with tbf on both ends. Nothing is created in the root namespace, and
 * names carry the owner pid plus a random tag so concurrent labs never collide (see plan.ts).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { TorusError } from '../protocols/errors.js';
import { linkKey, planLab, tbfArgs, type HostPlan, type LabOptions, type LabPlan, type LinkPlan } from './plan.js';
import { destroyNetnsSync, run, type RunResult } from './sh.js';
import { trackLab, untrackLab } from './cleanup.js';

export interface LabHost {
  /** 'h0', 'h1', ... */
  readonly name: string;
  readonly index: number;
  /** The namespace name, usable with `ip netns exec`. */
  readonly ns: string;
  readonly lanIp: string;
  /** Every IPv4 address of this host: LAN first, then its point-to-point links in link order. */
  readonly ips: readonly string[];
  /** Interface name → IPv4 address inside this host. */
  readonly interfaces: Readonly<Record<string, string>>;
}

/** Target of cut/restore/setRate: a host index for a point-to-point link, or 'lan' for the host's LAN port. */
export type LinkTarget = number | 'lan';

interface Edge {
  /** [namespace, device] pairs: the two ends whose egress is shaped (or dropped when cut). */
  readonly ends: readonly (readonly [string, string])[];
  rate: string | undefined;
  /** tbf bucket in bytes; undefined: tbfBurstBytes(rate) */
  burst?: number | undefined;
  cut: boolean;
}

export class Lab {
  readonly id: string;
  readonly hosts: readonly LabHost[];
  readonly plan: LabPlan;
  readonly #edges = new Map<string, Edge>();
  readonly #children = new Set<ChildProcess>();
  readonly #mcBlocked = new Set<number>();
  #torndown = false;

  private constructor(plan: LabPlan) {
    this.plan = plan;
    this.id = plan.id;
    this.hosts = plan.hosts.map((h) => {
      const interfaces: Record<string, string> = { [h.lanIf]: h.lanIp };
      for (const l of plan.links) {
        if (l.a === h.index) interfaces[l.ifA] = l.ipA;
        if (l.b === h.index) interfaces[l.ifB] = l.ipB;
      }
      return {
        name: `h${h.index}`,
        index: h.index,
        ns: h.ns,
        lanIp: h.lanIp,
        ips: Object.values(interfaces),
        interfaces,
      };
    });
    for (const h of plan.hosts)
      this.#edges.set(`lan-${h.index}`, {
        ends: [
          [h.ns, h.lanIf],
          [plan.swNs, h.swPort],
        ],
        rate: plan.lanRate,
        cut: false,
      });
    for (const l of plan.links)
      this.#edges.set(linkKey(l.a, l.b), {
        ends: [
          [this.#ns(l.a), l.ifA],
          [this.#ns(l.b), l.ifB],
        ],
        rate: l.rate,
        cut: false,
      });
  }

  /** Why a lab cannot be built here, or undefined when it can (root and `ip`/`tc` present on Linux). */
  static unavailableReason(): string | undefined {
    if (process.platform !== 'linux') return `the lab needs Linux network namespaces (platform is ${process.platform})`;
    if (typeof process.getuid === 'function' && process.getuid() !== 0)
      return 'the lab needs root (network namespaces, veth, tc)';
    const paths = (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin', '/sbin']);
    for (const tool of ['ip', 'tc'])
      if (!paths.some((p) => existsSync(`${p}/${tool}`)))
        return `the lab needs \`${tool}\` (apt-get install -y iproute2)`;
    return undefined;
  }

  static available(): boolean {
    return Lab.unavailableReason() === undefined;
  }

  static async create(options: LabOptions): Promise<Lab> {
    const why = Lab.unavailableReason();
    if (why) throw new TorusError('TORUS_CONFIG_INVALID', why);
    const tag = options.tag ?? randomBytes(4).readUInt32BE(0).toString(36).slice(0, 6);
    const lab = new Lab(planLab(options, process.pid, tag));
    trackLab(lab);
    try {
      await lab.#build();
    } catch (error) {
      await lab.teardown();
      throw error;
    }
    return lab;
  }

  async #build(): Promise<void> {
    const { swNs, hosts, links } = this.plan;
    await run('ip', ['netns', 'add', swNs]);
    await run('ip', ['-n', swNs, 'link', 'set', 'lo', 'up']);
    // Snooping off: with no querier the bridge would otherwise only reliably flood 224.0.0.x.
    await run('ip', ['-n', swNs, 'link', 'add', 'br0', 'type', 'bridge', 'mcast_snooping', '0']);
    await run('ip', ['-n', swNs, 'link', 'set', 'br0', 'up']);
    await Promise.all(hosts.map((h) => this.#buildHost(h)));
    await Promise.all(links.map((l) => this.#buildLink(l)));
    await Promise.all(hosts.map((h) => this.#awaitCarrier(h.ns)));
  }

  /**
   * Until every interface of a host is operationally up. A veth set up reports carrier only once the kernel's
   * link watcher has run (up to a second later), and until then getifaddrs omits it on newer libuv: a process
   * started at once in the host would list no address on that link.
   */
  async #awaitCarrier(ns: string, boundMs = 5000): Promise<void> {
    const deadline = Date.now() + boundMs;
    for (;;) {
      const links = JSON.parse((await run('ip', ['-n', ns, '-j', 'link', 'show'])).stdout) as {
        ifname: string;
        operstate: string;
      }[];
      const down = links.filter((l) => l.ifname !== 'lo' && l.operstate !== 'UP').map((l) => l.ifname);
      if (down.length === 0) return;
      if (Date.now() > deadline)
        throw new TorusError(
          'TORUS_INTERNAL',
          `lab ${this.id}: ${down.join(', ')} in ${ns} not up after ${boundMs} ms`,
        );
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async #buildHost(h: HostPlan): Promise<void> {
    const sw = this.plan.swNs;
    await run('ip', ['netns', 'add', h.ns]);
    await run('ip', ['-n', h.ns, 'link', 'set', 'lo', 'up']);
    await run('ip', ['link', 'add', h.lanIf, 'netns', h.ns, 'type', 'veth', 'peer', 'name', h.swPort, 'netns', sw]);
    await run('ip', ['-n', sw, 'link', 'set', h.swPort, 'master', 'br0', 'up']);
    await run('ip', ['-n', h.ns, 'addr', 'add', `${h.lanIp}/24`, 'dev', h.lanIf]);
    await run('ip', ['-n', h.ns, 'link', 'set', h.lanIf, 'up', 'multicast', 'on']);
    // Without a multicast route (there is no default route) a send to 224.0.0.251 fails with ENETUNREACH.
    await run('ip', ['-n', h.ns, 'route', 'add', '224.0.0.0/4', 'dev', h.lanIf]);
    await this.#apply(`lan-${h.index}`);
  }

  async #buildLink(l: LinkPlan): Promise<void> {
    const nsA = this.#ns(l.a),
      nsB = this.#ns(l.b);
    await run('ip', ['link', 'add', l.ifA, 'netns', nsA, 'type', 'veth', 'peer', 'name', l.ifB, 'netns', nsB]);
    await run('ip', ['-n', nsA, 'addr', 'add', `${l.ipA}/${l.prefixLen}`, 'dev', l.ifA]);
    await run('ip', ['-n', nsB, 'addr', 'add', `${l.ipB}/${l.prefixLen}`, 'dev', l.ifB]);
    await run('ip', ['-n', nsA, 'link', 'set', l.ifA, 'up']);
    await run('ip', ['-n', nsB, 'link', 'set', l.ifB, 'up']);
    await this.#apply(linkKey(l.a, l.b));
  }

  #ns(host: number): string {
    const h = this.plan.hosts[host];
    if (!h) throw new TorusError('TORUS_CONFIG_INVALID', `lab ${this.id}: no host ${host}`);
    return h.ns;
  }

  #edge(a: number, b: LinkTarget): Edge {
    this.#ns(a);
    const key = b === 'lan' ? `lan-${a}` : linkKey(a, b);
    const edge = this.#edges.get(key);
    if (!edge) throw new TorusError('TORUS_CONFIG_INVALID', `lab ${this.id}: no link between ${a} and ${b}`);
    return edge;
  }

  /** Puts an edge's root qdiscs in the state it should have: dropped (cut), shaped, or the default. */
  async #apply(key: string): Promise<void> {
    const edge = this.#edges.get(key);
    if (!edge) return;
    await Promise.all(
      edge.ends.map(async ([ns, dev]) => {
        // A byte fifo of limit 0 drops every frame, ARP included: a silent black hole, like a pulled cable
        // behind a switch (setting the device down would instead fail connects at once with ENETUNREACH).
        if (edge.cut) await run('tc', ['-n', ns, 'qdisc', 'replace', 'dev', dev, 'root', 'bfifo', 'limit', '0']);
        else if (edge.rate)
          await run('tc', ['-n', ns, 'qdisc', 'replace', 'dev', dev, 'root', ...tbfArgs(edge.rate, edge.burst)]);
        else await run('tc', ['-n', ns, 'qdisc', 'del', 'dev', dev, 'root']).catch(() => undefined);
      }),
    );
  }

  /** The address of host b on its point-to-point link with host a. */
  linkIp(a: number, b: number): string {
    const l = this.plan.links.find((x) => (x.a === a && x.b === b) || (x.a === b && x.b === a));
    if (!l) throw new TorusError('TORUS_CONFIG_INVALID', `lab ${this.id}: no link between ${a} and ${b}`);
    return l.b === b ? l.ipB : l.ipA;
  }

  /** Interface name of host `host` on its link to `peer` ('lan0' for the LAN). */
  ifName(host: number, peer: LinkTarget): string {
    if (peer === 'lan') return this.plan.hosts[host]?.lanIf ?? 'lan0';
    const l = this.plan.links.find((x) => (x.a === host && x.b === peer) || (x.a === peer && x.b === host));
    if (!l) throw new TorusError('TORUS_CONFIG_INVALID', `lab ${this.id}: no link between ${host} and ${peer}`);
    return l.a === host ? l.ifA : l.ifB;
  }

  /** A process inside a host (`ip netns exec` execs the command, so the pid is the command's own). */
  spawn(host: number, cmd: string, args: readonly string[] = [], opts: SpawnOptions = {}): ChildProcess {
    if (this.#torndown) throw new TorusError('TORUS_SHUTTING_DOWN', `lab ${this.id} is torn down`);
    const child = spawn('ip', ['netns', 'exec', this.#ns(host), cmd, ...args], { stdio: 'pipe', ...opts });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    child.once('error', () => this.#children.delete(child));
    return child;
  }

  /** Runs a command in a host to completion: an argv array, or a string given to `sh -c`. Rejects on failure. */
  exec(host: number, cmd: string | readonly string[], opts: { timeoutMs?: number } = {}): Promise<RunResult> {
    const argv = typeof cmd === 'string' ? ['sh', '-c', cmd] : cmd;
    return run('ip', ['netns', 'exec', this.#ns(host), ...argv], opts);
  }

  /** The command line (arguments joined by spaces) of every process in a host's namespace: what tests count. */
  async commandLines(host: number): Promise<string[]> {
    const r = await this.exec(
      host,
      `for p in $(ip netns pids ${this.#ns(host)}); do tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo; done`,
    );
    return r.stdout.split('\n').filter((l) => l !== '' && !l.includes('/proc/'));
  }

  /** Black-holes a point-to-point link (both directions), or with 'lan' cuts a host off the LAN. */
  async cut(a: number, b: LinkTarget): Promise<void> {
    const edge = this.#edge(a, b);
    edge.cut = true;
    await this.#apply(b === 'lan' ? `lan-${a}` : linkKey(a, b));
  }

  async restore(a: number, b: LinkTarget): Promise<void> {
    const edge = this.#edge(a, b);
    edge.cut = false;
    await this.#apply(b === 'lan' ? `lan-${a}` : linkKey(a, b));
  }

  /**
   * Changes a link's shaping (both ends); undefined removes it. A cut link stays cut with the new rate stored.
   * `burstBytes`: the tbf bucket (plan.ts `tbfArgs`), default sized for the rate.
   */
  async setRate(a: number, b: LinkTarget, rate: string | undefined, burstBytes?: number): Promise<void> {
    if (rate !== undefined) tbfArgs(rate, burstBytes);
    const edge = this.#edge(a, b);
    edge.rate = rate;
    edge.burst = burstBytes;
    await this.#apply(b === 'lan' ? `lan-${a}` : linkKey(a, b));
  }

  /**
   * Silently drops IPv4 multicast to and from a host's LAN interface (a network where mDNS does not work).
   * tc here has no drop action (no act_gact), so matching packets are redirected into a veth whose peer is down.
   */
  async blockMulticast(host: number, blocked = true): Promise<void> {
    const ns = this.#ns(host),
      dev = this.plan.hosts[host]?.lanIf ?? 'lan0';
    if (blocked === this.#mcBlocked.has(host)) return;
    if (blocked) {
      await run('ip', ['-n', ns, 'link', 'add', 'mcsink0', 'type', 'veth', 'peer', 'name', 'mcsink1']);
      await run('ip', ['-n', ns, 'link', 'set', 'mcsink0', 'up']);
      await run('tc', ['-n', ns, 'qdisc', 'replace', 'dev', dev, 'clsact']);
      for (const dir of ['ingress', 'egress']) {
        await run('tc', [
          '-n',
          ns,
          'filter',
          'add',
          'dev',
          dev,
          dir,
          'protocol',
          'ip',
          'u32',
          'match',
          'ip',
          'dst',
          '224.0.0.0/4',
          'action',
          'mirred',
          'egress',
          'redirect',
          'dev',
          'mcsink0',
        ]);
      }
      this.#mcBlocked.add(host);
    } else {
      await run('tc', ['-n', ns, 'qdisc', 'del', 'dev', dev, 'clsact']).catch(() => undefined);
      await run('ip', ['-n', ns, 'link', 'del', 'mcsink0']).catch(() => undefined);
      this.#mcBlocked.delete(host);
    }
  }

  /** Live children spawned through this lab. */
  get processes(): readonly ChildProcess[] {
    return [...this.#children];
  }

  get torndown(): boolean {
    return this.#torndown;
  }

  /** Kills every process of the lab and deletes its namespaces. Idempotent; synchronous inside, so exit handlers can use it. */
  teardownSync(): void {
    if (this.#torndown) return;
    this.#torndown = true;
    for (const child of this.#children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    this.#children.clear();
    // Hosts first (their processes hold sockets), then the switch; deleting a namespace removes its veth ends
    // and with them the peers, so nothing is left behind anywhere.
    for (const h of this.plan.hosts) destroyNetnsSync(h.ns);
    destroyNetnsSync(this.plan.swNs);
    untrackLab(this);
  }

  async teardown(): Promise<void> {
    this.teardownSync();
  }
}
