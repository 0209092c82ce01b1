/**
 * End-to-end helper: N real `node dist/main.js` processes, one per lab namespace, each with its own temp data
 * dir, reachable from the test process (root namespace) through a byte bridge.
 *
 * Why a bridge: the root namespace cannot reach 10.77.x addresses, and Node has no setns(). Per host we run a
 * tiny forwarder inside the namespace that listens on a Unix socket (a filesystem path, visible from every
 * network namespace) and pipes each connection to the node's API on 127.0.0.1; in the test process a TCP
 * listener on 127.0.0.1:<free port> pipes to that socket. So `node.api` is a plain `http://127.0.0.1:P` URL
 * that fetch, the CLI and a browser in the root namespace can all use, and requests still enter the node
 * through its own namespace's loopback (Host/Origin stay same-origin for the dashboard).
 *
 * Everything is torn down in `t.teardown`, even on failure: node processes (SIGTERM, then SIGKILL), forwarders,
 * bridges, data dirs; the lab (namespaces) is torn down by `withLab`. Each node's stderr is kept and printed
 * (tail) when the test fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { Lab } from '../../src/lab/index.js';
import { readApiTokenIn } from '../../src/node/credentials.js';

export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
/** The default API port: every node is in its own namespace, so all use it and the CLI needs no --api inside one. */
export const API_PORT = 52515;

/** The part of a tap Test used here. */
export interface E2eTest {
  teardown(fn: () => unknown): void;
  comment(...args: unknown[]): void;
  passing(): boolean;
}

export interface NodeSpec {
  /** Extra flags after the defaults (`--port`, `--data-dir`, `--name`, `--cluster`, `--failure-timeout-ms`). */
  args?: string[];
}

export interface ClusterOptions {
  cluster?: string;
  failureTimeoutMs?: number;
  logLevel?: string;
  /** Per host index, the cluster name (default `cluster`, or 'e2e'). */
  clusterOf?: (host: number) => string;
  /** Per host index, extra flags (e.g. `--iface-type p2p1=thunderbolt`). */
  nodeArgs?: (host: number) => string[];
  /** Per host index, the cluster secret given as TORUS_SECRET (default: one random secret for the whole cluster,
   *  the way a user joins machines with the printed join command). */
  secretOf?: (host: number) => string;
}

/** Why an end-to-end test cannot run, or undefined. */
export function e2eUnavailableReason(): string | undefined {
  if (!existsSync(MAIN)) return 'dist/main.js is missing (run `npm run build` first)';
  return undefined;
}

const FORWARDER = `
const net = require('node:net'); const fs = require('node:fs');
const [sock, port] = process.argv.slice(1);
try { fs.unlinkSync(sock); } catch {}
net.createServer((c) => {
  const u = net.connect(Number(port), '127.0.0.1');
  c.pipe(u).pipe(c);
  u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
}).listen(sock, () => process.stdout.write('ready\\n'));
`;

export class E2eNode {
  readonly host: number;
  readonly dataDir: string;
  readonly name: string;
  proc: ChildProcess | undefined;
  /** `http://127.0.0.1:P`: the node's API, reachable from the root namespace. */
  api = '';
  /** The node id, as its API says (set by `E2eCluster.views`). */
  id = '';
  /** The id and incarnation the process printed on stdout at start. */
  printedId = '';
  incarnation = 0;
  /** Epoch ms of the spawn, and of the start line on stdout. */
  spawnedAt = 0;
  printedAt = 0;
  stderr = '';
  stdout = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #bridge: Server | undefined;
  #token: string | undefined;
  readonly #sockets = new Set<Socket>();

  constructor(host: number, dataDir: string, name: string) {
    this.host = host;
    this.dataDir = dataDir;
    this.name = name;
  }

  get alive(): boolean {
    return !!this.proc && this.exit === undefined;
  }

  /** Starts the bridge once (it survives node restarts: the forwarder dials the API per connection). */
  async bridge(lab: Lab, sockPath: string): Promise<void> {
    const fwd = lab.spawn(this.host, process.execPath, ['-e', FORWARDER, sockPath, String(API_PORT)]);
    await new Promise<void>((resolve, reject) => {
      fwd.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(); });
      fwd.once('exit', (code) => reject(new Error(`forwarder in h${this.host} exited with ${code}`)));
    });
    this.#bridge = createServer((c) => {
      this.#sockets.add(c);
      const u = connect(sockPath);
      c.pipe(u).pipe(c);
      u.on('error', () => c.destroy());
      c.on('error', () => u.destroy());
      c.on('close', () => { this.#sockets.delete(c); u.destroy(); });
    });
    await new Promise<void>((resolve) => this.#bridge!.listen(0, '127.0.0.1', resolve));
    const addr = this.#bridge.address();
    this.api = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  /**
   * The API token, read from `<dataDir>/api-token` the way the CLI on the node's machine finds it (the node writes
   * it at start; re-read after each start, since `--api-token-file` or a new secret may change it).
   */
  get token(): string {
    this.#token ??= readApiTokenIn(this.dataDir);
    if (!this.#token) throw new Error(`h${this.host}: no API token in ${this.dataDir} yet (has the node started?)`);
    return this.#token;
  }

  /** `Authorization: Bearer <token>` for this node (empty before the node wrote its token). */
  get auth(): Record<string, string> {
    try {
      return { authorization: `Bearer ${this.token}` };
    } catch {
      return {};
    }
  }

  /** fetch against this node's API with its token, as a script or the CLI would call it. */
  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(this.api + path, { ...init, headers: { ...this.auth, ...(init.headers as Record<string, string> | undefined) } });
  }

  start(lab: Lab, args: string[], env: NodeJS.ProcessEnv): void {
    this.#token = undefined;
    this.exit = undefined;
    this.stdout = '';
    this.printedAt = 0;
    this.spawnedAt = Date.now();
    const proc = lab.spawn(this.host, process.execPath, [MAIN, 'start', ...args], { env });
    this.proc = proc;
    proc.stderr!.on('data', (d: Buffer) => { this.stderr += d.toString(); });
    proc.stdout!.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      const m = /torus node (\S+) \(incarnation (\d+)\)/.exec(this.stdout);
      if (m && !this.printedAt) { this.printedId = m[1]!; this.incarnation = Number(m[2]); this.printedAt = Date.now(); }
    });
    proc.once('exit', (code, signal) => { if (this.proc === proc) this.exit = { code, signal }; });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.alive) this.proc!.kill(signal);
  }

  /** Waits for the process to exit; SIGKILL after `ms`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 5000): Promise<void> {
    if (!this.alive) return;
    const proc = this.proc!;
    const done = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), ms);
    await done;
    clearTimeout(timer);
  }

  async get<T = any>(path: string, timeoutMs = 3000): Promise<T> {
    const res = await this.fetch(path, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.json();
    if (!res.ok) throw new Error(`GET ${path} on h${this.host}: ${res.status} ${JSON.stringify(body)}`);
    return body as T;
  }

  /** Like get, but null while the node does not answer (starting, killed). */
  async tryGet<T = any>(path: string, timeoutMs = 3000): Promise<T | null> {
    try {
      return await this.get<T>(path, timeoutMs);
    } catch {
      return null;
    }
  }

  closeBridge(): void {
    for (const s of this.#sockets) s.destroy();
    this.#bridge?.close();
  }
}

/** What every node says about the cluster at one moment. */
export interface NodeView {
  host: number;
  node: { id: string; role: string; leaderId?: string; incarnation: number; name: string };
  state: { digest: string; lastIndex: number; state: { nodes: Record<string, unknown>; links: unknown[] } };
  topology: { nodes: { id: string; name?: string; role?: string; memory?: { ramAvailable: number; ramTotal: number }; interfaces?: { name: string; ip: string; type: string }[] }[];
    links: { source: string; sink: string; ip?: string; type?: string; rttMs?: number; bandwidthBps?: number; measuredAt?: number }[] };
}

export class E2eCluster {
  readonly lab: Lab;
  readonly nodes: E2eNode[] = [];
  readonly #opts: ClusterOptions;
  readonly #tmp: string;
  /** The join token every node of this cluster is started with (unless `secretOf` says otherwise). */
  readonly secret = 'torus-' + randomBytes(32).toString('base64url');

  private constructor(lab: Lab, opts: ClusterOptions, tmp: string) {
    this.lab = lab;
    this.#opts = opts;
    this.#tmp = tmp;
  }

  /** Starts one node per lab host (all at once) and registers the cleanup. Does not wait for convergence. */
  static async start(t: E2eTest, lab: Lab, opts: ClusterOptions = {}): Promise<E2eCluster> {
    const tmp = mkdtempSync(join(tmpdir(), 'torus-e2e-'));
    const c = new E2eCluster(lab, opts, tmp);
    t.teardown(async () => {
      if (!t.passing() || process.env.TORUS_E2E_LOGS) c.dumpLogs(t, Number(process.env.TORUS_E2E_LOGS) || 40);
      await Promise.all(c.nodes.map((n) => n.stop('SIGTERM', 3000).catch(() => undefined)));
      for (const n of c.nodes) n.closeBridge();
      await lab.teardown();
      rmSync(tmp, { recursive: true, force: true });
    });
    for (const h of lab.hosts) {
      const n = new E2eNode(h.index, mkdtempSync(join(tmp, `h${h.index}-`)), `h${h.index}`);
      c.nodes.push(n);
      await n.bridge(lab, join(tmp, `h${h.index}.sock`));
    }
    for (const n of c.nodes) c.startNode(n.host);
    return c;
  }

  /** (Re)starts the node of a host with the same data dir (same id, next incarnation). */
  startNode(host: number): E2eNode {
    const n = this.nodes[host]!;
    const o = this.#opts;
    const args = ['--port', String(API_PORT), '--data-dir', n.dataDir, '--name', n.name, '--cluster', o.clusterOf?.(host) ?? o.cluster ?? 'e2e',
      '--failure-timeout-ms', String(o.failureTimeoutMs ?? 3000), ...(o.nodeArgs?.(host) ?? [])];
    n.start(this.lab, args, { ...process.env, TORUS_LOG_LEVEL: o.logLevel ?? 'warn', TORUS_SECRET: o.secretOf?.(host) ?? this.secret });
    return n;
  }

  live(): E2eNode[] {
    return this.nodes.filter((n) => n.alive);
  }

  /** The view of every given node, or null if one does not answer. */
  async views(nodes: E2eNode[] = this.live()): Promise<NodeView[] | null> {
    const vs = await Promise.all(nodes.map(async (n) => {
      const [node, state, topology] = await Promise.all([n.tryGet('/v1/node'), n.tryGet('/v1/state'), n.tryGet('/v1/topology')]);
      if (!node || !state || !topology) return null;
      n.id = (node as NodeView['node']).id;
      return { host: n.host, node, state, topology } as NodeView;
    }));
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
    return leaders.length === 1
      && vs.every((v) => v.node.leaderId === leaders[0]!.node.id)
      && vs.every((v) => Object.keys(v.state.state.nodes).length === n && Object.keys(v.state.state.nodes).every((id) => ids.has(id)))
      && new Set(vs.map((v) => v.state.digest)).size === 1;
  }

  /** Waits until the given nodes (default: every live one) agree (same node set, digest and leader); returns their views. */
  async converged(ms: number, extra: (vs: NodeView[]) => boolean = () => true, nodes?: () => E2eNode[]): Promise<NodeView[]> {
    const members = nodes ?? (() => this.live());
    return this.until(`${members().length} nodes to agree`, async () => {
      const vs = await this.views(members());
      return E2eCluster.agreed(vs, members().length) && extra(vs!) && vs;
    }, ms, 400);
  }

  /**
   * Runs `node dist/main.js <args>` inside a host's namespace (the CLI then reaches its node at the default port and
   * finds the API token in the node's data dir, named by TORUS_DATA_DIR as for a node started with --data-dir).
   */
  async cli(host: number, args: string[], timeoutMs = 20_000): Promise<{ code: number; stdout: string; stderr: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, TORUS_DATA_DIR: this.nodes[host]!.dataDir };
    delete env.TORUS_API;
    delete env.TORUS_TOKEN;
    const child = this.lab.spawn(host, process.execPath, [MAIN, ...args], { env });
    let stdout = '', stderr = '';
    child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number>((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 128 : 1))));
    clearTimeout(timer);
    return { code, stdout, stderr };
  }

  dumpLogs(t: E2eTest, lines = 40): void {
    for (const n of this.nodes) {
      const tail = n.stderr.trim().split('\n').slice(-lines).join('\n');
      t.comment(`--- h${n.host} ${n.id} exit=${JSON.stringify(n.exit)} stdout: ${n.stdout.trim()}\n--- stderr (last ${lines} lines):\n${tail}`);
    }
  }

  get tmpDir(): string {
    return this.#tmp;
  }
}
