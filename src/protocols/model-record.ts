/**
 * What torus knows about a model artifact (docs/artifacts.md, "Models"): from its `config.json` the architecture
 * and sizes, from its safetensors headers every tensor with its file, absolute byte range and layer. It travels in
 * `ArtifactHeld.model` and lives in the replicated state (`artifacts[id].model`), so it is bounded in bytes:
 * tensors are compact tuples and the whole record is at most `MAX_MODEL_RECORD_BYTES` of JSON.
 */
import { ValidationError } from './errors.js';
import { CLOSED, Count, W } from './event-fields.js';
import { Type, type Shape } from './schema-kit.js';

/** 1 MiB of JSON: about 10 000 tensors (a dense 405B model has ~1 100); the state's snapshot frame is 16 MiB. */
export const MAX_MODEL_RECORD_BYTES = 1024 * 1024;
export const MAX_MODEL_TENSORS = 65_536;
export const MAX_MODEL_FILES = 4096;

/** A block index (0 … layers − 1), the embeddings (first stage), final norm and head (last stage), or every stage. */
export type TensorLayer = number | 'embed' | 'norm' | 'head' | 'all';
const Layer = Type.Union([
  Count(0, 1_000_000),
  Type.Literal('embed'),
  Type.Literal('norm'),
  Type.Literal('head'),
  Type.Literal('all'),
]);
const Word = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** `[name, file index, dtype, shape, begin, end, layer]`: bytes [begin, end) of `files[file]` hold the tensor. */
export const ModelTensor = Type.Tuple([
  Word(512),
  Count(0, MAX_MODEL_FILES - 1),
  Word(16),
  Type.Array(Count(), { maxItems: 16 }),
  Count(),
  Count(),
  Layer,
]);

export const ModelFile = Type.Object(
  {
    path: Word(4096),
    bytes: Count(),
    /** where the tensor data starts: bytes [0, dataStart) are the length and the JSON header */
    dataStart: Count(8),
  },
  CLOSED,
);

export const ModelRecord = Type.Object(
  {
    format: Type.Literal('safetensors'),
    architecture: Word(128),
    modelType: Type.Optional(Word(128)),
    layers: Count(1, 1_000_000),
    hiddenSize: Count(1),
    kvHeads: Count(1),
    attentionHeads: Type.Optional(Count(1)),
    /** the dtype that holds most of the weights' bytes (safetensors' names: BF16, F16, F32 …) */
    dtype: Word(16),
    /** the output head is the embedding matrix (`tie_word_embeddings`): the last stage needs `embed` too */
    tiedEmbeddings: Type.Optional(Type.Boolean()),
    files: Type.Array(ModelFile, { minItems: 1, maxItems: MAX_MODEL_FILES }),
    tensors: Type.Array(ModelTensor, { minItems: 1, maxItems: MAX_MODEL_TENSORS }),
  },
  CLOSED,
);
/** `[name, file, dtype, shape, begin, end, layer]` */
export type ModelTensorTuple = Shape<typeof ModelTensor>;
export type ModelRecord = Shape<typeof ModelRecord>;

/** The rules the schema cannot say: the byte bound, tensors inside their files' data, layers below the count. */
export function checkModelRecord(m: ModelRecord, p: string): ModelRecord {
  const size = Buffer.byteLength(JSON.stringify(m));
  if (size > MAX_MODEL_RECORD_BYTES)
    throw new ValidationError(W, p, `${size} bytes of JSON, over the ${MAX_MODEL_RECORD_BYTES}-byte bound`);
  m.tensors.forEach(([, file, , , begin, end, layer], i) => {
    const f = m.files[file];
    const q = `${p}.tensors[${i}]`;
    if (!f) throw new ValidationError(W, q, `file ${file} is not in files (${m.files.length})`);
    if (begin < f.dataStart || begin > end || end > f.bytes)
      throw new ValidationError(W, q, `byte range [${begin}, ${end}) is outside the data of ${f.path}`);
    if (typeof layer === 'number' && layer >= m.layers)
      throw new ValidationError(W, q, `layer ${layer} is not below the layer count ${m.layers}`);
  });
  return m;
}
