/**
 * When a node re-executes itself with MALLOC_ARENA_MAX, and with what: the real re-exec is in test/node/main.test.ts.
 */
import t from 'tap';
import { execWithFewerMallocArenas, keepMallocArenas } from '../../src/native/malloc-arenas.js';

const base = {
  platform: 'linux' as NodeJS.Platform,
  env: { PATH: '/usr/bin' } as NodeJS.ProcessEnv,
  execPath: '/usr/bin/node',
  execArgv: ['--enable-source-maps'],
  argv: ['/usr/bin/node', '/opt/torus/dist/main.js', '--port', '0'],
};
const execve = (): never => {
  throw new Error('not here');
};

t.test('kept as it is: not Linux, a limit already chosen, or no execve', async (t) => {
  t.equal(keepMallocArenas({ ...base, platform: 'darwin', execve }), 'not Linux');
  t.match(keepMallocArenas({ ...base, env: { MALLOC_ARENA_MAX: '4' }, execve }), /MALLOC_ARENA_MAX is set \(4\)/);
  t.match(keepMallocArenas({ ...base, env: { MALLOC_ARENA_MAX: '0' }, execve }), /set \(0\)/, "0: glibc's default");
  t.match(keepMallocArenas({ ...base, env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=3' }, execve }), /GLIBC_TUNABLES/);
  t.equal(keepMallocArenas({ ...base }), 'this Node has no process.execve');
  t.equal(keepMallocArenas({ ...base, env: { GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' }, execve }), undefined);
});

t.test('re-executed with the same node, flags and arguments, and MALLOC_ARENA_MAX=2 added', async (t) => {
  const calls: [string, string[], NodeJS.ProcessEnv][] = [];
  const recording = (file: string, args: string[], env: NodeJS.ProcessEnv): never => {
    calls.push([file, args, env]);
    throw new Error('replaced');
  };
  t.throws(() => execWithFewerMallocArenas({ ...base, execve: recording }), /replaced/);
  t.same(calls, [
    [
      '/usr/bin/node',
      ['/usr/bin/node', '--enable-source-maps', '/opt/torus/dist/main.js', '--port', '0'],
      { PATH: '/usr/bin', MALLOC_ARENA_MAX: '2' },
    ],
  ]);
  t.equal(execWithFewerMallocArenas({ ...base, platform: 'darwin', execve: recording }), 'not Linux', 'else: why');
});
