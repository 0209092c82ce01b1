/**
 * One real `node dist/main.js` process inside a lab namespace, reachable from the root namespace through a byte
 * bridge — the building block of NodeCluster (node-cluster.ts), used by the lab tests and the lab benchmarks.
 *
 * Why a bridge: the root namespace cannot reach 10.77.x addresses, and Node has no setns(). Per host we run a
 * tiny forwarder inside the namespace that listens on a Unix socket (a filesystem path, visible from every
 * network namespace) and pipes each connection to the node's API on 127.0.0.1; in the root namespace a TCP
 * listener on 127.0.0.1:<free port> pipes to that socket. So `node.api` is a plain `http://127.0.0.1:P` URL
 * that fetch, the CLI and a browser in the root namespace can all use, and requests still enter the node
 * through its own namespace's loopback (Host/Origin stay same-origin for the dashboard).
 */
import { existsSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { Lab } from './lab.js';
import { readApiTokenIn } from '../protocols/data-dir-files.js';

/** The repository (or package) root: the first folder above this file with a package.json (from src/, dist/ or build/src/). */
function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from, i = 0; i < 6; i++, dir = dirname(dir)) if (existsSync(join(dir, 'package.json'))) return dir;
  return join(from, '..', '..');
}

/** The node's entry point the lab starts (built by `npm run build`). */
export const MAIN = join(packageRoot(), 'dist', 'main.js');
/** The default API port: every node is in its own namespace, so all use it and the CLI needs no --api inside one. */
export const API_PORT = 52515;

/** Why lab nodes cannot be started, or undefined. */
export function nodeUnavailableReason(): string | undefined {
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

export class NodeProcess {
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
      fwd.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) resolve();
      });
      fwd.once('exit', (code) => reject(new Error(`forwarder in h${this.host} exited with ${code}`)));
    });
    this.#bridge = createServer((c) => {
      this.#sockets.add(c);
      const u = connect(sockPath);
      c.pipe(u).pipe(c);
      u.on('error', () => c.destroy());
      c.on('error', () => u.destroy());
      c.on('close', () => {
        this.#sockets.delete(c);
        u.destroy();
      });
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
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(this.api + path, {
      ...init,
      headers: { ...this.auth, ...(init.headers as Record<string, string> | undefined) },
    });
    // Read before a restarted node wrote its new token (a rotated secret)? Read the file again next time.
    if (res.status === 401) this.#token = undefined;
    return res;
  }

  start(lab: Lab, args: string[], env: NodeJS.ProcessEnv): void {
    this.#token = undefined;
    this.exit = undefined;
    this.stdout = '';
    this.printedAt = 0;
    this.spawnedAt = Date.now();
    const proc = lab.spawn(this.host, process.execPath, [MAIN, 'start', ...args], { env });
    this.proc = proc;
    proc.stderr!.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
    proc.stdout!.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      const m = /torus node (\S+) \(incarnation (\d+)\)/.exec(this.stdout);
      if (m && !this.printedAt) {
        this.printedId = m[1]!;
        this.incarnation = Number(m[2]);
        this.printedAt = Date.now();
      }
    });
    proc.once('exit', (code, signal) => {
      if (this.proc === proc) this.exit = { code, signal };
    });
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

  // biome-ignore lint/suspicious/noExplicitAny: tests and benchmarks read answers of many shapes; `unknown` would force a cast at every call
  async get<T = any>(path: string, timeoutMs = 3000): Promise<T> {
    const res = await this.fetch(path, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.json();
    if (!res.ok) throw new Error(`GET ${path} on h${this.host}: ${res.status} ${JSON.stringify(body)}`);
    return body as T;
  }

  /** Like get, but null while the node does not answer (starting, killed). */
  // biome-ignore lint/suspicious/noExplicitAny: as get()
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
