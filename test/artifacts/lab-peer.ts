/** A standalone artifact peer (src/artifacts/standalone.ts) in a lab namespace, driven over stdin/stdout by lab tests. */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const STANDALONE = fileURLToPath(new URL('../../dist/artifacts/standalone.js', import.meta.url));

export interface Progress {
  id: string;
  state: string;
  have: number;
  chunks: number;
  bySource: Record<string, { chunks: number }>;
  error?: { message: string };
}

export class Peer {
  last: Progress | undefined;
  readonly #waiters: ((m: any) => boolean)[] = [];
  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let m: any;
      try {
        m = JSON.parse(line);
      } catch {
        return;
      }
      if (m.transfers?.[0]) this.last = m.transfers[0];
      for (const [i, w] of this.#waiters.entries())
        if (w(m)) {
          this.#waiters.splice(i, 1);
          break;
        }
    });
  }
  send(o: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(o)}\n`);
  }
  next(match: (m: any) => boolean, what: string, ms = 60_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      this.#waiters.push((m) => {
        if (!match(m)) return false;
        clearTimeout(timer);
        resolve(m);
        return true;
      });
    });
  }
  async until(what: string, fn: (p: Progress) => boolean, ms = 60_000): Promise<Progress> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (this.last && fn(this.last)) return this.last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(this.last)})`);
  }
}
