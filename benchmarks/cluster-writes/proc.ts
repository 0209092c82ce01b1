/**
 * One standalone cluster process (src/actors/cluster/standalone.ts) driven over its stdin/stdout JSON lines: its
 * latest status, proposals answered with the node's reply (committed, with the entry's index, or refused, with
 * the error), and the entries it applied (started with `recordApplied`).
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export type ProposeAnswer =
  | { readonly ok: true; readonly index: number }
  | { readonly ok: false; readonly error: string };

export interface AppliedLog {
  readonly entries: readonly { readonly index: number; readonly event: unknown }[];
  /** Indices of snapshots the node installed instead of applying the entries up to them. */
  readonly installed: readonly number[];
}

interface Line {
  ev: string;
  id?: number;
  ok?: boolean;
  result?: { indices?: number[] };
  error?: { code?: string; message?: string };
  entries?: AppliedLog['entries'];
  installed?: number[];
}

export class Proc {
  status: { role: string; leader: string | null; digest: string; nodes: string[]; lastIndex: number } | null = null;
  readonly #waiting = new Map<number, (line: Line) => void>();
  #id = 1;
  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        return; // not one of the node's JSON lines
      }
      if (line.ev === 'status') this.status = line as unknown as Proc['status'];
      if ((line.ev === 'reply' || line.ev === 'applied') && line.id !== undefined) this.#waiting.get(line.id)?.(line);
    });
  }

  #request(op: string, extra: Record<string, unknown> = {}): Promise<Line> {
    const id = this.#id++;
    return new Promise((resolve) => {
      this.#waiting.set(id, (line) => {
        this.#waiting.delete(id);
        resolve(line);
      });
      this.child.stdin!.write(`${JSON.stringify({ id, op, ...extra })}\n`);
    });
  }

  /** Proposes one event; the answer comes when it is committed and applied, or refused. */
  async propose(event: unknown): Promise<ProposeAnswer> {
    const line = await this.#request('propose', { events: [event] });
    const index = line.result?.indices?.[0];
    if (line.ok === true && typeof index === 'number') return { ok: true, index };
    if (line.ok === true) return { ok: false, error: `committed without an index: ${JSON.stringify(line.result)}` };
    return { ok: false, error: `${line.error?.message ?? 'refused'} (${line.error?.code ?? 'no code'})` };
  }

  /** The entries this node applied so far, in order; fails when the node does not answer (no `recordApplied`). */
  async applied(timeoutMs = 30_000): Promise<AppliedLog> {
    let timer: NodeJS.Timeout | undefined;
    const line = await Promise.race([
      this.#request('applied'),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${this.name} did not list its applied entries`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!Array.isArray(line.entries)) throw new Error(`${this.name} answered without entries: ${JSON.stringify(line)}`);
    return { entries: line.entries, installed: line.installed ?? [] };
  }
}
