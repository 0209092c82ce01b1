/** A list given as an array (a config file) or as one comma-separated string (a flag); null for anything else. */
export function commaList(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return null;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
