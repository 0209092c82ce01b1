/**
 * What a user gets from the package: `npm pack`, then the tarball installed into an empty folder (its
 * dependencies from the registry, as a user's `npm install` would), and from there `torus bench ring --help`,
 * the Gloo script `bench ring --gloo` runs, and the README's embedding snippet (run as an ES module, on a data dir
 * of its own). Needs `npm run build` first (npm test does): the package ships dist as built.
 */
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

t.setTimeout(600_000);

t.test(
  'the packed package installs into an empty folder and runs',
  { skip: skipOrFail(existsSync(join(ROOT, 'dist', 'main.js')) ? undefined : 'run `npm run build` first') },
  async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'torus-pack-'));
    t.teardown(() => rmSync(work, { recursive: true, force: true }));
    const packed = JSON.parse(
      execFileSync(npm, ['pack', '--json', '--pack-destination', work], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    for (const need of ['dist/main.js', 'dist/index.js', 'benchmarks/ring/gloo_rank.py', 'README.md', 'CHANGELOG.md'])
      t.ok(files.includes(need), `the tarball has ${need}`);
    t.notOk(
      files.some((f) => f.startsWith('src/') || f.startsWith('test/')),
      'no sources or tests in it',
    );

    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
    );
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed[0]!.filename)], {
      cwd: app,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const bin = join(app, 'node_modules', '.bin', 'torus');

    const help = spawnSync(bin, ['bench', 'ring', '--help'], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    t.equal(help.status, 0, `torus bench ring --help exits 0 (${help.stderr.slice(0, 300)})`);
    t.match(help.stdout, /bench ring/, 'and prints its usage');
    t.ok(
      existsSync(join(app, 'node_modules', 'torus', 'benchmarks', 'ring', 'gloo_rank.py')),
      'the Gloo script is installed where bench ring --gloo looks',
    );
    const lookup = join(app, 'node_modules', 'torus', 'dist', 'bench', 'ring', 'gloo.js');
    const found = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { glooScript } from ${JSON.stringify(pathToFileURL(lookup).href)}; console.log(glooScript() ?? 'none')`,
      ],
      { cwd: app, encoding: 'utf8' },
    );
    t.match(
      found.stdout.trim(),
      /node_modules\/torus\/benchmarks\/ring\/gloo_rank\.py$/,
      `and bench ring --gloo finds it (${found.stderr.slice(0, 200)})`,
    );

    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const snippet = /## Embedding the runtime\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    if (!t.ok(snippet, "the README's embedding snippet")) return;
    writeFileSync(join(app, 'embed.mjs'), snippet!);
    const dataDir = join(work, 'data');
    const embed = spawnSync(process.execPath, ['embed.mjs'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, TORUS_DATA_DIR: dataDir },
    });
    t.equal(embed.status, 0, `the snippet runs from the installed package (${embed.stderr.slice(0, 500)})`);
    t.match(embed.stdout, /\S/, 'and prints the node id and its state');
  },
);
