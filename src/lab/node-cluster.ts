/**
 * A lab cluster of real nodes: N `node dist/main.js` processes, one per lab namespace, each with its own temp data
 * dir and one cluster secret (TORUS_SECRET), reachable from the root namespace (node-process.ts). Used by the lab
 * tests (test/e2e/lab-cluster.ts re-exports it) and the lab benchmarks (benchmarks/ring-live).
 *
 * Everything is torn down by the owner's `teardown`, even on failure: node processes (SIGTERM, then SIGKILL),
 * forwarders, bridges, data dirs, the lab (namespaces). Each node's stderr is kept and printed (tail) when the
 * owner failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Lab } from './lab.js';
import { API_PORT, MAIN, NodeProcess } from './node-process.js';

/** What a cluster needs from its owner (a tap Test, or a benchmark's own teardown list). */
export interface ClusterTest {
  teardown(fn: () => unknown): void;
  comment(...args: unknown[]): void;
  passing(): boolean;
}

export interface ClusterOptions {
  cluster?: string;
  failureTimeoutMs?: number;
  /** `--probe-interval-ms` and `--confirm-measure-ms` for every node (default: the node's own defaults). Tests
   *  whose scenario waits for a link to go down or for the confirmation pass, without depending on how long
   *  those take, set them short. */
  probeIntervalMs?: number;
  confirmMeasureMs?: number;
  logLevel?: string;
  /** Per host index, the cluster name (default `cluster`, or 'e2e'). */
  clusterOf?: (host: number) => string;
  /** Per host index, extra flags (e.g. `--iface-type p2p1=thunderbolt`). */
  nodeArgs?: (host: number) => string[];
  /** Per host index, the cluster secret given as TORUS_SECRET (default: one random secret for the whole cluster,
   *  the way a user joins machines with the printed join command). */
  secretOf?: (host: number) => string;
  /** Per host index, extra environment variables (e.g. an allocator setting tried on one node of several). */
  envOf?: (host: number) => NodeJS.ProcessEnv;
}

/** What every node says about the cluster at one moment. */
export interface NodeView {
  host: number;
  node: { id: string; role: string; leaderId?: string; incarnation: number; name: string };
  state: { digest: string; lastIndex: number; state: { nodes: Record<string, unknown>; links: unknown[] } };
  topology: {
    nodes: {
      id: string;
      name?: string;
      role?: string;
      memory?: { ramAvailable: number; ramTotal: number };
      interfaces?: { name: string; ip: string; type: string }[];
    }[];
    links: {
      source: string;
      sink: string;
      ip?: string;
      type?: string;
      rttMs?: number;
      bandwidthBps?: number;
      measuredAt?: number;
    }[];
  };
}

export class NodeCluster {
  readonly lab: Lab;
  readonly nodes: NodeProcess[] = [];
  readonly #opts: ClusterOptions;
  readonly #tmp: string;
  /** The join token every node of this cluster is started with (unless `secretOf` says otherwise). */
  readonly secret = `torus-${randomBytes(32).toString('base64url')}`;

  private constructor(lab: Lab, opts: ClusterOptions, tmp: string) {
    this.lab = lab;
    this.#opts = opts;
    this.#tmp = tmp;
  }

  /** Starts one node per lab host (all at once) and registers the cleanup. Does not wait for convergence. */
  static async start(t: ClusterTest, lab: Lab, opts: ClusterOptions = {}): Promise<NodeCluster> {
    const tmp = mkdtempSync(join(tmpdir(), 'torus-e2e-'));
    const c = new NodeCluster(lab, opts, tmp);
    t.teardown(async () => {
      if (!t.passing() || process.env.TORUS_E2E_LOGS) c.dumpLogs(t, Number(process.env.TORUS_E2E_LOGS) || 40);
      await Promise.all(c.nodes.map((n) => n.stop('SIGTERM', 3000).catch(() => undefined)));
      for (const n of c.nodes) n.closeBridge();
      await lab.teardown();
      rmSync(tmp, { recursive: true, force: true });
    });
    for (const h of lab.hosts) {
      const n = new NodeProcess(h.index, mkdtempSync(join(tmp, `h${h.index}-`)), `h${h.index}`);
      c.nodes.push(n);
      await n.bridge(lab, join(tmp, `h${h.index}.sock`));
    }
    for (const n of c.nodes) c.startNode(n.host);
    return c;
  }

  /** (Re)starts the node of a host with the same data dir (same id, next incarnation). */
  startNode(host: number): NodeProcess {
    const n = this.nodes[host]!;
    const o = this.#opts;
    const args = [
      '--port',
      String(API_PORT),
      '--data-dir',
      n.dataDir,
      '--name',
      n.name,
      '--cluster',
      o.clusterOf?.(host) ?? o.cluster ?? 'e2e',
      '--failure-timeout-ms',
      String(o.failureTimeoutMs ?? 3000),
      ...(o.probeIntervalMs !== undefined ? ['--probe-interval-ms', String(o.probeIntervalMs)] : []),
      ...(o.confirmMeasureMs !== undefined ? ['--confirm-measure-ms', String(o.confirmMeasureMs)] : []),
      ...(o.nodeArgs?.(host) ?? []),
    ];
    n.start(this.lab, args, {
      ...process.env,
      TORUS_LOG_LEVEL: o.logLevel ?? 'warn',
      TORUS_SECRET: o.secretOf?.(host) ?? this.secret,
      ...o.envOf?.(host),
    });
    return n;
  }

  live(): NodeProcess[] {
    return this.nodes.filter((n) => n.alive);
  }

  /** The view of every given node, or null if one does not answer. */
  async views(nodes: NodeProcess[] = this.live()): Promise<NodeView[] | null> {
    const vs = await Promise.all(
      nodes.map(async (n) => {
        const [node, state, topology] = await Promise.all([
          n.tryGet('/v1/node'),
          n.tryGet('/v1/state'),
          n.tryGet('/v1/topology'),
        ]);
        if (!node || !state || !topology) return null;
        n.id = (node as NodeView['node']).id;
        return { host: n.host, node, state, topology } as NodeView;
      }),
    );
    return vs.every((v) => v !== null) ? (vs as NodeView[]) : null;
  }

  /** Polls `fn` until it returns a truthy value; throws naming `what` (and the last value seen) after `ms`. */
  async until<T>(what: string, fn: () => Promise<T | null | false | undefined>, ms: number, everyMs = 250): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** Every node lists exactly the live nodes, one digest, one leader that everyone names. */
  static agreed(vs: NodeView[] | null, n: number): boolean {
    if (!vs || vs.length !== n) return false;
    const ids = new Set(vs.map((v) => v.node.id));
    const leaders = vs.filter((v) => v.node.role === 'leader');
    return (
      leaders.length === 1 &&
      vs.every((v) => v.node.leaderId === leaders[0]!.node.id) &&
      vs.every(
        (v) =>
          Object.keys(v.state.state.nodes).length === n && Object.keys(v.state.state.nodes).every((id) => ids.has(id)),
      ) &&
      new Set(vs.map((v) => v.state.digest)).size === 1
    );
  }

  /** Waits until the given nodes (default: every live one) agree (same node set, digest and leader); returns their views. */
  async converged(
    ms: number,
    extra: (vs: NodeView[]) => boolean = () => true,
    nodes?: () => NodeProcess[],
  ): Promise<NodeView[]> {
    const members = nodes ?? (() => this.live());
    let last: NodeView[] | null = null;
    try {
      return await this.until(
        `${members().length} nodes to agree`,
        async () => {
          const vs = await this.views(members());
          last = vs;
          return NodeCluster.agreed(vs, members().length) && extra(vs!) && vs;
        },
        ms,
        400,
      );
    } catch (error) {
      // A timeout that says what each node last showed, so a flake in CI can be read from its log alone.
      throw new Error(`${(error as Error).message}; last seen: ${NodeCluster.describe(last)}`);
    }
  }

  /** One line per node: role, leader, digest, node count, links and how many of them carry a measured bandwidth. */
  static describe(vs: NodeView[] | null): string {
    if (!vs) return 'not every node answered';
    return vs
      .map((v) => {
        const links = v.topology.links;
        const measured = links.filter((l) => typeof l.bandwidthBps === 'number');
        const devices = v.topology.nodes.filter((n) => (n as { device?: unknown }).device !== undefined).length;
        return (
          `h${v.host} ${v.node.role} leader=${v.node.leaderId ?? '-'} digest=${v.state.digest.slice(0, 8)} ` +
          `index=${v.state.lastIndex} nodes=${Object.keys(v.state.state.nodes).length} links=${links.length} ` +
          `measured=${measured.length} devices=${devices}`
        );
      })
      .join(' | ');
  }

  /**
   * Runs `node dist/main.js <args>` inside a host's namespace (the CLI then reaches its node at the default port and
   * finds the API token in the node's data dir, named by TORUS_DATA_DIR as for a node started with --data-dir).
   */
  async cli(
    host: number,
    args: string[],
    timeoutMs = 20_000,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, TORUS_DATA_DIR: this.nodes[host]!.dataDir };
    delete env.TORUS_API;
    delete env.TORUS_TOKEN;
    const child = this.lab.spawn(host, process.execPath, [MAIN, ...args], { env });
    let stdout = '',
      stderr = '';
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number>((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 128 : 1))));
    clearTimeout(timer);
    return { code, stdout, stderr };
  }

  dumpLogs(t: ClusterTest, lines = 40): void {
    for (const n of this.nodes) {
      const tail = n.stderr.trim().split('\n').slice(-lines).join('\n');
      t.comment(
        `--- h${n.host} ${n.id} exit=${JSON.stringify(n.exit)} stdout: ${n.stdout.trim()}\n--- stderr (last ${lines} lines):\n${tail}`,
      );
    }
  }

  get tmpDir(): string {
    return this.#tmp;
  }
}

/** Every member has a memory figure and links to every other (what the planner needs before placing). */
export const profiled = (vs: NodeView[]): boolean =>
  vs.every(
    (v) =>
      v.topology.nodes.length === vs.length &&
      v.topology.nodes.every((n) => n.memory) &&
      v.topology.links.length === vs.length * (vs.length - 1),
  );
