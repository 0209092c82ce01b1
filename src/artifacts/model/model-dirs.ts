/**
 * A runner's `TORUS_MODEL_DIR` (docs/artifacts.md, "Models"): the shard directory of its pipeline stage, written
 * by `writeShardDirectory` from the store's copy of the model (partial: only the stage's chunks are there) into
 * `<store>/<id>/shards/layers-<from>-<to>/`. Built once per artifact and layer range and reused by later runners
 * after a cheap check (the index names exactly the stage's tensors, every file has the size its header and
 * tensors make, config.json is there); a directory that fails it is built again. Building copies the stage's
 * bytes, which takes a while for a large stage: it runs in the background, one build per directory, and the gate
 * asks again when it ends (`changes`).
 */
import { existsSync, readFileSync, rmSync, statSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { asTorusError } from '../../protocols/errors.js';
import type { ModelRecord } from '../../protocols/model-record.js';
import { CONFIG, INDEX } from './model-reader.js';
import { shardFileSizes, stageTensors, writeShardDirectory } from './shard-writer.js';
import type { LayerRange } from './stage-chunks.js';
import { ChangeSignal } from '../change-signal.js';

export const stageDirName = (stage: LayerRange): string => `layers-${stage.fromLayer}-${stage.toLayer}`;

/** Why `dir` is not the built shard of `names` (undefined: it is). */
export function shardDirectoryProblem(model: ModelRecord, names: readonly string[], dir: string): string | undefined {
  if (!existsSync(join(dir, CONFIG))) return `${CONFIG} is missing`;
  let map: Record<string, unknown>;
  try {
    map = (JSON.parse(readFileSync(join(dir, INDEX), 'utf8')) as { weight_map: Record<string, unknown> }).weight_map;
  } catch (error) {
    return `${INDEX}: ${(error as Error).message}`;
  }
  const sizes = shardFileSizes(model, names);
  const listed = Object.keys(map ?? {}).sort();
  const want = [...names].sort();
  if (listed.length !== want.length || listed.some((n, i) => n !== want[i]))
    return `${INDEX} does not name exactly the stage's ${want.length} tensors`;
  for (const [path, bytes] of sizes) {
    const size = statSync(join(dir, path), { throwIfNoEntry: false })?.size;
    if (size !== bytes) return `${path} has ${size ?? 'no'} bytes, expected ${bytes}`;
  }
  return undefined;
}

export type ModelDirState =
  | { readonly state: 'ready'; readonly dir: string }
  | { readonly state: 'building' }
  | { readonly state: 'failed'; readonly reason: string };

export class ModelDirectories {
  readonly #building = new Map<string, Promise<void>>();
  readonly #failed = new Map<string, string>();
  /** built and checked in this process: not checked again on every ask */
  readonly #ready = new Set<string>();
  /** bumped when a build ends (built or failed) */
  readonly changes = new ChangeSignal();

  /**
   * The shard directory of `stage` under `shardsDir`, written from `sourceDir` (which must hold the stage's byte
   * ranges): ready, still being built (started by this call when needed), or failed with the reason (asked again
   * after a failure, it builds again).
   */
  get(model: ModelRecord, stage: LayerRange, sourceDir: string, shardsDir: string): ModelDirState {
    const dir = join(shardsDir, stageDirName(stage));
    if (this.#building.has(dir)) return { state: 'building' };
    const failed = this.#failed.get(dir);
    if (failed !== undefined) {
      this.#failed.delete(dir);
      return { state: 'failed', reason: failed };
    }
    const names = stageTensors(model, stage);
    if (this.#ready.has(dir) && existsSync(dir)) return { state: 'ready', dir };
    if (existsSync(dir) && shardDirectoryProblem(model, names, dir) === undefined) {
      this.#ready.add(dir);
      return { state: 'ready', dir };
    }
    this.#ready.delete(dir);
    const build = (async () => {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(shardsDir, { recursive: true, mode: 0o755 });
      await writeShardDirectory(model, names, sourceDir, dir);
      const problem = shardDirectoryProblem(model, names, dir);
      if (problem) throw new Error(`the shard directory just written does not check: ${problem}`);
      this.#ready.add(dir);
    })()
      .catch((error: unknown) => {
        this.#failed.set(dir, `building ${dir}: ${asTorusError(error).message}`);
      })
      .finally(() => {
        this.#building.delete(dir);
        this.changes.bump();
      });
    this.#building.set(dir, build);
    return { state: 'building' };
  }

  /** Resolves once every build running now has ended (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.#building.values()]);
  }
}
