/**
 * Pipeline layer split, as exo: proportional to available memory by largest remainder (stable ties: lower rank
 * first), then every node gets at least one layer, taken from the node holding the most (first such rank).
 * Callers make sure layers >= nodes.
 */
export function allocateLayersProportionally(totalLayers: number, fractions: readonly number[]): number[] {
  const n = fractions.length;
  const raw = fractions.map((f) => f * totalLayers);
  const res = raw.map((x) => Math.trunc(x));
  const missing = totalLayers - res.reduce((a, b) => a + b, 0);
  const byRemainder = raw
    .map((_x, i) => i)
    .sort((a, b) => {
      const d = (raw[b] as number) - (res[b] as number) - ((raw[a] as number) - (res[a] as number));
      return d !== 0 ? d : a - b;
    });
  for (let i = 0; i < missing && i < n; i++)
    res[byRemainder[i] as number] = (res[byRemainder[i] as number] as number) + 1;
  for (let i = 0; i < n; i++) {
    if (res[i] !== 0) continue;
    const max = Math.max(...res);
    const j = res.indexOf(max);
    if (max <= 1) break; // cannot donate: only possible when totalLayers < n, which callers exclude
    res[j] = max - 1;
    res[i] = 1;
  }
  return res;
}

/** Split `layers` over nodes with the given available memory (equal shares when every figure is 0). */
export function splitLayersByMemory(layers: number, available: readonly number[]): number[] {
  const total = available.reduce((a, b) => a + b, 0);
  const fractions = total > 0 ? available.map((m) => m / total) : available.map(() => 1 / available.length);
  return allocateLayersProportionally(layers, fractions);
}

/** Bytes a node needs for its share of a pipeline (exo's per-node check). */
export function shareBytes(memoryBytes: number, layers: number, share: number): number {
  return Math.floor(Math.round(memoryBytes * share) / layers);
}

export interface ShareShortfall {
  readonly position: number;
  readonly layers: number;
  readonly requiredBytes: number;
  readonly availableBytes: number;
}

/** First node whose pipeline share does not fit its available memory, or undefined when all fit. */
export function findShareShortfall(
  memoryBytes: number,
  layers: number,
  split: readonly number[],
  available: readonly number[],
): ShareShortfall | undefined {
  for (let i = 0; i < split.length; i++) {
    const requiredBytes = shareBytes(memoryBytes, layers, split[i] as number);
    const availableBytes = available[i] as number;
    if (requiredBytes > availableBytes)
      return { position: i, layers: split[i] as number, requiredBytes, availableBytes };
  }
  return undefined;
}
