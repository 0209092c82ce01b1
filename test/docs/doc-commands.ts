/**
 * The commands a reader copies from README.md and docs/*.md: every `node dist/main.js …`, `torus …` and
 * `npm run bench -- …` in a fenced code block or an inline code span, turned from its written notation
 * (`[optional]`, `a|b`, `(--to N1,N2,… | --instance I)`, placeholders such as ID, SIZE, DIR) into the argument
 * lists a reader would type. Used by test/docs/commands.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocCommand {
  /** `README.md:39` */
  readonly where: string;
  /** the command as written */
  readonly text: string;
  readonly program: 'cli' | 'bench';
  /** the arguments after `node dist/main.js` / `npm run bench --`, one list per written alternative */
  readonly variants: readonly (readonly string[])[];
}

const PREFIX = /^(?:[A-Z_]+=\S+\s+)*(node dist\/main\.js|torus|npm run bench --)(?=\s|$)/;

/** Every command of README.md and docs/*.md, in file order. */
export function docCommands(root: string): DocCommand[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((file) => commandsIn(file, readFileSync(join(root, file), 'utf8')));
}

function commandsIn(file: string, text: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = text.split('\n');
  let fenced = false;
  let prose: { line: number; text: string }[] = [];
  const flushProse = (): void => {
    // Inline code spans may wrap across lines of one paragraph.
    const joined = prose.map((p) => p.text).join('\n');
    for (const m of joined.matchAll(/`([^`]+)`/g)) {
      const line = prose[joined.slice(0, m.index).split('\n').length - 1]!.line;
      const span = m[1]!.replace(/\s*\n\s*/g, ' ').trim();
      if (PREFIX.test(span)) out.push(command(`${file}:${line}`, span));
    }
    prose = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*```/.test(line)) {
      if (!fenced) flushProse();
      fenced = !fenced;
      continue;
    }
    if (!fenced) {
      if (line.trim() === '') flushProse();
      else prose.push({ line: i + 1, text: line });
      continue;
    }
    let body = line.trim();
    if (!PREFIX.test(body)) continue;
    const start = i + 1;
    while (body.endsWith('\\') && i + 1 < lines.length) body = `${body.slice(0, -1).trim()} ${lines[++i]!.trim()}`;
    out.push(command(`${file}:${start}`, body.replace(/\s+#\s.*$/, '').trim()));
  }
  flushProse();
  return out;
}

function command(where: string, text: string): DocCommand {
  const m = PREFIX.exec(text)!;
  const program = m[1] === 'npm run bench --' ? 'bench' : 'cli';
  const rest = text.slice(m[0].length).replace(/\\\|/g, '|');
  return { where, text, program, variants: alternatives(rest).map(tokens) };
}

/** `(A | B)` groups: one variant per alternative. */
function alternatives(text: string): string[] {
  const group = /\(([^()]*\|[^()]*)\)/.exec(text);
  if (!group) return [text];
  return group[1]!
    .split(/\s\|\s/)
    .flatMap((alt) =>
      alternatives(text.slice(0, group.index) + alt.trim() + text.slice(group.index + group[0].length)),
    );
}

/**
 * Optional parts included, `a|b` as its first choice, repetition marks dropped; a `…` standing for a flag's value
 * is kept as `…` (the test fills in an example).
 */
function tokens(text: string): string[] {
  const all = text.replace(/[[\]]/g, '').split(/\s+/);
  return all
    .filter((t, i) => t !== '' && ((t !== '…' && t !== '...') || /^-[^=]*$/.test(all[i - 1] ?? '')))
    .map((t) => (t.startsWith('--') || !t.includes('|') ? t : t.split('|')[0]!))
    .map((t) => (t === '…' || t === '...' ? '…' : t.replace(/(?:…|\.\.\.)$/, '')));
}
