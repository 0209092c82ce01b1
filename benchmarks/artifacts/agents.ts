/**
 * The benchmark's artifact peers: one standalone ArtifactService (src/artifacts/standalone.ts, the real data path)
 * per lab host, driven over stdin/stdout. A second set from another build (`--baseline DIR`) runs beside it on
 * another port, so before and after are measured on the same links in the same minutes.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Lab } from '../../src/lab/index.js';

/** `cpuMs`: the receiver's CPU (user + system) over the transfer; `cpuSysMs` its kernel part (older builds: absent). */
export interface Done {
  done: string;
  ms: number;
  cpuMs?: number;
  cpuSysMs?: number;
  state: string;
  bySource?: Record<string, { chunks: number }>;
  error?: { message: string };
}

export class Agent {
  readonly #waiters: ((m: any) => boolean)[] = [];
  constructor(
    readonly id: string,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let m: any;
      try {
        m = JSON.parse(line);
      } catch {
        return;
      }
      const i = this.#waiters.findIndex((w) => w(m));
      if (i >= 0) this.#waiters.splice(i, 1);
    });
  }
  send(o: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(o)}\n`);
  }
  next<T>(match: (m: any) => boolean, ms = 900_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agent ${this.id}: timed out`)), ms);
      this.#waiters.push((m) => {
        if (!match(m)) return false;
        clearTimeout(timer);
        resolve(m as T);
        return true;
      });
    });
  }
}

/** TORUS_BENCH_PROFILE=DIR: V8 CPU profiles of the agents (h0 serves, the others receive) into DIR. */
const profile = (tag: string): string[] =>
  process.env.TORUS_BENCH_PROFILE
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.TORUS_BENCH_PROFILE, '--cpu-prof-name', `${tag}.cpuprofile`]
    : [];

export interface AgentSet {
  readonly agents: Agent[];
  readonly artifact: { id: string; bytes: number; chunks: number };
  fetchOn(a: Agent, upstream?: string): Promise<Done>;
  rm(a: Agent): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts one agent per host from `standaloneJs` (each host known at `addressOf(host)`), adds `file` on h0 and tells
 * every agent that h0 holds it.
 */
export async function startAgents(
  lab: Lab,
  o: {
    standaloneJs: string;
    tag: string;
    dataRoot: string;
    port: number;
    key: string;
    file: string;
    addressOf: (host: number) => string;
  },
): Promise<AgentSet> {
  const nodes = lab.hosts.map((h) => ({ id: `h${h.index}`, ip: o.addressOf(h.index) }));
  const agents = lab.hosts.map(
    (h) =>
      new Agent(
        `h${h.index}`,
        lab.spawn(h.index, process.execPath, [
          ...profile(`${o.tag}-h${h.index}`),
          o.standaloneJs,
          JSON.stringify({
            nodeId: `h${h.index}`,
            dataDir: join(o.dataRoot, `${o.tag}-h${h.index}`),
            port: o.port,
            key: o.key,
            nodes,
          }),
        ]),
      ),
  );
  await Promise.all(agents.map((a) => a.next((m) => m.ready, 60_000)));
  const a0 = agents[0]!;
  a0.send({ cmd: 'add', path: o.file });
  const artifact = await a0.next<{ id: string; bytes: number; chunks: number; error?: string }>(
    (m) => m.id !== undefined || m.error,
  );
  if (artifact.error) throw new Error(artifact.error);
  for (const a of agents)
    a.send({
      cmd: 'held',
      event: {
        type: 'ArtifactHeld',
        nodeId: 'h0',
        artifactId: artifact.id,
        name: 'bench',
        bytes: artifact.bytes,
        chunks: artifact.chunks,
        have: artifact.chunks,
      },
    });
  return {
    agents,
    artifact,
    async fetchOn(a, upstream) {
      a.send({ cmd: 'fetch', id: artifact.id, ...(upstream ? { upstream } : {}) });
      const d = await a.next<Done>((m) => m.done === artifact.id || m.refused === artifact.id || m.error);
      if (d.state !== 'complete') throw new Error(`${o.tag} ${a.id}: ${d.error?.message ?? JSON.stringify(d)}`);
      return d;
    },
    async rm(a) {
      a.send({ cmd: 'rm', id: artifact.id });
      await a.next((m) => m.removed === artifact.id || m.error);
    },
    // Let the agents close and exit on their own (their profiles are written at exit), at most 10 s.
    async close() {
      await Promise.all(
        agents.map(
          (a) =>
            new Promise<void>((resolve) => {
              if (a.child.exitCode !== null) return resolve();
              const timer = setTimeout(resolve, 10_000);
              a.child.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              a.child.stdin!.end();
            }),
        ),
      );
    },
  };
}
