/**
 * Resolves a sibling module for `new Worker(...)`, child processes or piscina, so the same code works when
 * running compiled (`dist/*.js`) and under tap's TypeScript loader (`src/*.ts`).
 */
export function siblingModule(importMetaUrl: string, relativeWithoutExtension: string): URL {
  const extension = importMetaUrl.endsWith('.ts') ? '.ts' : '.js';
  return new URL(relativeWithoutExtension + extension, importMetaUrl);
}

/** Node flags a child process needs to load the same kind of module (the TS loader under tests, nothing when compiled). */
export function childExecArgv(importMetaUrl: string): string[] {
  return importMetaUrl.endsWith('.ts')
    ? process.execArgv.filter(
        (arg) => arg.startsWith('--import') || arg.startsWith('--loader') || arg === '--enable-source-maps',
      )
    : [];
}
