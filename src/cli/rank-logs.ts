/**
 * The terminal side of `torus run`: every rank's stdout and stderr, followed through the node's API
 * (`GET /v1/instances/:id/logs?rank=N&stream=…&follow=1`) and written line by line, each line prefixed
 * `[rank N node]` as torchrun's `[rankN]:` and mpirun's `--tag-output` do.
 *
 * One stream per (node, stdout|stderr) for as long as the job runs: a node's log file outlives group restarts
 * (it is appended to), so a rank restarted on the same node keeps its stream; a node that a re-placement brings
 * in gets its own. The prefix names the rank the node holds in the current plan.
 */
import type { Agent } from 'node:https';
import { getStream } from '../http/http-stream.js';
import type { CliIo } from './api-client.js';

export interface RankLogsOptions {
  /** `/v1/instances/:id/logs?…` as a full URL for a query string. */
  readonly urlFor: (query: string) => string;
  readonly headers: Readonly<Record<string, string>>;
  /** The CLI's certificate-pinning agent for an https API (cli/pinned-tls.ts). */
  readonly agent?: Agent | undefined;
  readonly io: CliIo;
  /** A node's display name (its name, else its id). */
  readonly nameOf: (node: string) => string;
}

/** A stream `drained` stopped waiting for: its output may lack its last lines. */
export interface OpenStream {
  readonly node: string;
  readonly stream: 'stdout' | 'stderr';
  /** the rank the node holds in the current plan */
  readonly rank: number | undefined;
}

export class RankLogs {
  readonly #o: RankLogsOptions;
  readonly #abort = new AbortController();
  readonly #rankOf = new Map<string, number>();
  readonly #pipes: { node: string; stream: 'stdout' | 'stderr'; done: Promise<void>; ended: boolean }[] = [];
  #lastDataAt = Date.now();

  constructor(options: RankLogsOptions) {
    this.#o = options;
  }

  /** Follows the plan `nodes` (rank order): new nodes get their streams, known ones their current rank. */
  follow(nodes: readonly string[]): void {
    nodes.forEach((node, rank) => {
      const known = this.#rankOf.has(node);
      this.#rankOf.set(node, rank);
      if (known) return;
      for (const stream of ['stdout', 'stderr'] as const) {
        const out = stream === 'stdout' ? this.#o.io.stdout : this.#o.io.stderr;
        const pipe = { node, stream, done: Promise.resolve(), ended: false };
        pipe.done = this.#pipe(this.#o.urlFor(`rank=${rank}&stream=${stream}&follow=1`), node, out).finally(() => {
          pipe.ended = true;
        });
        this.#pipes.push(pipe);
      }
    });
  }

  /**
   * Settles when every stream has ended by itself (the ranks are done), or once no stream has delivered anything
   * for `idleMs`: a node that is slow to serve the last lines (a loaded machine, a log that rotated many times) is
   * waited for as long as its lines keep coming, never cut at a fixed time. Answers the streams it stopped waiting
   * for, so the caller can say which output may be incomplete.
   */
  async drained(idleMs: number): Promise<readonly OpenStream[]> {
    const all = Promise.allSettled(this.#pipes.map((p) => p.done));
    for (;;) {
      const quietFor = Date.now() - this.#lastDataAt;
      if (quietFor >= idleMs) break;
      let timer: NodeJS.Timeout | undefined;
      const ended = await Promise.race([
        all.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), idleMs - quietFor);
        }),
      ]);
      clearTimeout(timer);
      if (ended) return [];
    }
    return this.#pipes
      .filter((p) => !p.ended)
      .map(({ node, stream }) => ({ node, stream, rank: this.#rankOf.get(node) }));
  }

  close(): void {
    this.#abort.abort();
  }

  #prefix(node: string): string {
    return `[rank ${this.#rankOf.get(node) ?? '?'} ${this.#o.nameOf(node)}] `;
  }

  /** One stream: each complete line with the prefix as it arrives, a partial last line at the end. */
  async #pipe(url: string, node: string, out: CliIo['stdout']): Promise<void> {
    let rest = '';
    const decoder = new TextDecoder();
    try {
      const res = await getStream(url, this.#o.headers, this.#abort.signal, this.#o.agent);
      if (res.statusCode !== 200) {
        res.resume();
        return;
      }
      for await (const chunk of res) {
        this.#lastDataAt = Date.now();
        const lines = (rest + decoder.decode(chunk as Buffer, { stream: true })).split('\n');
        rest = lines.pop() ?? '';
        if (lines.length) out.write(lines.map((l) => `${this.#prefix(node)}${l}\n`).join(''));
      }
    } catch {
      // aborted, or the node went away: what was written so far stays
    }
    if (rest) out.write(`${this.#prefix(node)}${rest}\n`);
  }
}
