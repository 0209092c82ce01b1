/**
 * The Prometheus text exposition format (0.0.4), the part every metrics file shares: one sample line, and a
 * family (HELP, TYPE, then its samples) written only once per name.
 */
export type Labels = Readonly<Record<string, string | number | undefined>>;
export type MetricType = 'gauge' | 'counter';

const escapeLabel = (value: string): string => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (value: string): string => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** Prometheus spells the non-finite values NaN, +Inf and -Inf. */
function sampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

export function series(name: string, labels: Labels, value: number): string {
  const parts = Object.entries(labels)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([k, v]) => `${k}="${escapeLabel(String(v))}"`);
  return `${name}${parts.length ? `{${parts.join(',')}}` : ''} ${sampleValue(value)}`;
}

/** Collects families into one exposition; a family with no samples still says what it would measure. */
export class Exposition {
  readonly #lines: string[] = [];

  family(name: string, type: MetricType, help: string, samples: readonly string[]): this {
    this.#lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`, ...samples);
    return this;
  }

  /** One unlabelled sample; skipped when the value is unknown on this platform. */
  single(name: string, type: MetricType, help: string, value: number | undefined, labels: Labels = {}): this {
    return value === undefined ? this : this.family(name, type, help, [series(name, labels, value)]);
  }

  text(): string {
    return `${this.#lines.join('\n')}\n`;
  }
}
