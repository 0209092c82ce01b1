/**
 * A model record as the API shows it (`GET /v1/artifacts/:id` → `model`): the tensors as objects naming their
 * file, and the bytes per layer and of the tensors outside the blocks (what placement by model will weigh).
 */
import type { ModelRecord } from '../../protocols/model-record.js';

export function modelView(m: ModelRecord) {
  const layerBytes = new Array<number>(m.layers).fill(0);
  const otherBytes = { embed: 0, norm: 0, head: 0, all: 0 };
  for (const [, , , , begin, end, layer] of m.tensors) {
    if (typeof layer === 'number') layerBytes[layer]! += end - begin;
    else otherBytes[layer] += end - begin;
  }
  const { tensors, ...rest } = m;
  return {
    ...rest,
    layerBytes,
    otherBytes,
    tensors: tensors.map(([name, file, dtype, shape, begin, end, layer]) => ({
      name,
      file: m.files[file]!.path,
      dtype,
      shape,
      begin,
      end,
      layer,
    })),
  };
}

/** What `artifacts add` prints about a model: the sizes, without the tensors. */
export function modelSummary(m: ModelRecord) {
  const { tensors, files, ...rest } = m;
  return { ...rest, files: files.length, tensors: tensors.length };
}

export function modelLine(m: ModelRecord): string {
  return `model ${m.architecture}: ${m.layers} layers, hidden size ${m.hiddenSize}, ${m.kvHeads} kv heads, ${m.dtype}, ${m.tensors.length} tensors in ${m.files.length} file(s)`;
}
