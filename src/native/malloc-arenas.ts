/**
 * glibc gives each thread that calls malloc an arena of its own, up to 8 per core, and returns an arena's free
 * pages to the OS only from its top. A node runs several worker threads and V8's helper threads, so freed memory
 * stays spread over many arenas: in a soak, arenas held about 17 MiB more than with two (docs/benchmarks.md,
 * Soak). glibc reads its limit only from the environment at process start, so a node started without one
 * replaces itself (execve: same pid, same stdio) with the same command and MALLOC_ARENA_MAX=2.
 */
export const NODE_MALLOC_ARENA_MAX = '2';

interface ExecveProcess {
  readonly platform: NodeJS.Platform;
  readonly env: NodeJS.ProcessEnv;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
}

/**
 * Why the node runs with glibc's own arena limit, or undefined when it should re-exec itself with ours: not
 * Linux (other allocators), a limit already chosen (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in
 * GLIBC_TUNABLES: the operator's choice wins; `MALLOC_ARENA_MAX=0` asks for glibc's default), or no execve in
 * this Node (before 22.15).
 */
export function keepMallocArenas(proc: ExecveProcess): string | undefined {
  if (proc.platform !== 'linux') return 'not Linux';
  if (proc.env.MALLOC_ARENA_MAX !== undefined) return `MALLOC_ARENA_MAX is set (${proc.env.MALLOC_ARENA_MAX})`;
  if (proc.env.GLIBC_TUNABLES?.includes('glibc.malloc.arena_max')) return 'GLIBC_TUNABLES sets arena_max';
  if (typeof proc.execve !== 'function') return 'this Node has no process.execve';
  return undefined;
}

/** Re-executes this process with MALLOC_ARENA_MAX set, unless keepMallocArenas says why not; returns that reason. */
export function execWithFewerMallocArenas(proc: ExecveProcess = process as ExecveProcess): string {
  const why = keepMallocArenas(proc);
  if (why !== undefined) return why;
  proc.execve?.(proc.execPath, [proc.execPath, ...proc.execArgv, ...proc.argv.slice(1)], {
    ...proc.env,
    MALLOC_ARENA_MAX: NODE_MALLOC_ARENA_MAX,
  });
  throw new Error('process.execve returned'); // it replaces the process or throws
}
