/**
 * CPU_TASKS names its modules as strings, which neither the compiler nor the folder rules (.dependency-cruiser.cjs)
 * follow: each named module must exist inside src/, export its task as the default function, and, with everything
 * it imports into the pool's threads, keep to the folder rules.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { CPU_TASKS } from '../../src/runtime/cpu-tasks.js';
import { siblingModule } from '../../src/runtime/module-url.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const registry = new URL('../../src/runtime/cpu-tasks.ts', import.meta.url).href;
// The worker resolves each path against the registry (cpu-task-worker.ts): the same here.
const files = Object.entries(CPU_TASKS).map(([task, path]) => ({
  task,
  file: relative(root, fileURLToPath(siblingModule(registry, path))),
}));

t.test('every task names a module inside src/ that exports its task', async (t) => {
  t.ok(files.length > 0, 'tasks are registered');
  for (const { task, file } of files) {
    t.ok(file.startsWith('src/'), `${task}: ${file} is inside src/`);
    t.ok(existsSync(`${root}${file}`), `${task}: ${file} exists`);
    const mod = (await import(`${root}${file}`)) as { default?: unknown };
    t.equal(typeof mod.default, 'function', `${task}: ${file} exports the task as its default function`);
  }
});

t.test('the task modules and what they import keep to the folder rules', async (t) => {
  const run = promisify(execFile);
  const bin = `${root}node_modules/.bin/depcruise`;
  const { stdout } = await run(
    bin,
    [...files.map((f) => f.file), '--config', '.dependency-cruiser.cjs', '--output-type', 'err'],
    { cwd: root },
  ).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout}${error.stderr}` }));
  t.match(stdout, /no dependency violations found/, 'depcruise over the task modules reports no violation');
});
