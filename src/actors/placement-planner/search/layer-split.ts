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

/** What a model's stages weigh (model-workload.ts): bytes per block, before the first and after the last. */
export interface StageWeights {
  readonly layerBytes: readonly number[];
  /** on the first stage only: the embeddings */
  readonly leading: number;
  /** on the last stage only: final norm and head (and the embeddings again when tied) */
  readonly trailing: number;
}

/**
 * Split a model's layers over stages in pipeline order, each stage's bytes proportional to its node's memory.
 * The bytes are laid end to end (leading, block 0 … block L−1, trailing); the cut after stage i falls where
 * the cumulative bytes reach its cumulative share, read as a fractional layer position; the fractional layer
 * counts between cuts are then rounded by largest remainder as `allocateLayersProportionally` does. So a first
 * stage carrying the embeddings and a last carrying the head get fewer blocks, and with equal blocks and nothing
 * outside them this is exactly `splitLayersByMemory`'s split.
 */
export function splitLayersByBytes(weights: StageWeights, available: readonly number[]): number[] {
  const k = available.length;
  const layers = weights.layerBytes.length;
  if (k === 1) return [layers];
  const blocks = weights.layerBytes.reduce((a, b) => a + b, 0);
  const total = weights.leading + blocks + weights.trailing;
  const memory = available.reduce((a, b) => a + b, 0);
  const shares = memory > 0 ? available.map((m) => m / memory) : available.map(() => 1 / k);
  const uniform = weights.layerBytes.every((b) => b === weights.layerBytes[0]);
  if (blocks === 0 || (uniform && weights.leading === 0 && weights.trailing === 0))
    return allocateLayersProportionally(layers, shares);
  // Where the bytes reach `target`, as a fractional layer position in [0, layers].
  const position = (target: number): number => {
    let at = weights.leading;
    if (target <= at) return 0;
    for (let l = 0; l < layers; l++) {
      const b = weights.layerBytes[l] as number;
      if (b > 0 && target <= at + b) return l + (target - at) / b;
      at += b;
    }
    return layers;
  };
  const fractions: number[] = [];
  let cumulative = 0;
  let previous = 0;
  for (let i = 0; i < k; i++) {
    cumulative += shares[i] as number;
    const cut = i === k - 1 ? layers : position(cumulative * total);
    // rounded, so that shares equal up to float error tie as equal (the lower rank first)
    fractions.push(Math.round((cut - previous) * 1e9) / 1e9 / layers);
    previous = cut;
  }
  return allocateLayersProportionally(layers, fractions);
}
