/**
 * A model artifact's record beside its manifest in the store (`<id>/model.json`, docs/artifacts.md): written by
 * `artifacts add` when the directory is a model, read (checked like an event's, cached) when the node announces
 * its holdings, so the replicated state gets the record from the node that has the files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../native/durable-fs.js';
import { checkModelRecord, ModelRecord } from '../../protocols/model-record.js';
import { compile } from '../../protocols/schema-kit.js';

export const MODEL_FILE = 'model.json';
const codec = compile(ModelRecord, 'event', 'model');

export function writeModelFile(artifactDir: string, model: ModelRecord): void {
  writeFileAtomicSync(join(artifactDir, MODEL_FILE), JSON.stringify(model), { mode: 0o600 });
}

/** The record in `artifactDir`, or undefined (none, or not readable as one: the artifact is then a plain one). */
export function readModelFile(artifactDir: string): ModelRecord | undefined {
  const path = join(artifactDir, MODEL_FILE);
  if (!existsSync(path)) return undefined;
  try {
    return checkModelRecord(codec.decode(JSON.parse(readFileSync(path, 'utf8'))), 'model');
  } catch {
    return undefined;
  }
}

/** Records by artifact id, read once (an id names fixed content, so its record never changes). */
export class StoredModels {
  readonly #cache = new Map<string, ModelRecord | null>();
  constructor(private readonly dirOf: (id: string) => string) {}

  get(id: string): ModelRecord | undefined {
    if (!this.#cache.has(id)) this.#cache.set(id, readModelFile(this.dirOf(id)) ?? null);
    return this.#cache.get(id) ?? undefined;
  }

  forget(id: string): void {
    this.#cache.delete(id);
  }
}
