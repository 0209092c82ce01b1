/** Keeps the last N lines of a runner's output (and supervisor notes) as its diagnostics. */
export class LineTail {
  readonly #max: number;
  readonly #lines: string[] = [];
  readonly #partial = { stdout: '', stderr: '' };

  constructor(max: number) {
    this.#max = max;
  }

  push(chunk: Buffer, stream: 'stdout' | 'stderr'): void {
    const text = this.#partial[stream] + chunk.toString('utf8');
    const parts = text.split('\n');
    // Bound a runaway line without a newline.
    this.#partial[stream] = (parts.pop() ?? '').slice(-4096);
    for (const line of parts) this.#add(stream === 'stderr' ? line : `[stdout] ${line}`);
  }

  note(line: string): void {
    this.#add(line);
  }

  #add(line: string): void {
    if (line.trim() === '') return;
    this.#lines.push(line.length > 1000 ? `${line.slice(0, 1000)}…` : line);
    if (this.#lines.length > this.#max) this.#lines.shift();
  }

  lines(): string[] {
    const tail = [...this.#lines];
    for (const [stream, rest] of Object.entries(this.#partial))
      if (rest.trim()) tail.push(stream === 'stderr' ? rest : `[stdout] ${rest}`);
    return tail.slice(-this.#max);
  }
}
