import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CHROMIUM_PATHS, findChromium } from '../fixtures/browser.js';
import { raw, startApi } from './fixtures/harness.js';

const SCRIPTS = ['app.js', 'dom.js', 'jobs.js', 'bench-chart.js', 'previews.js'];

t.test(
  'the dashboard scripts type-check (checkJs, DOM lib, the API view types) and are what the node serves',
  async (t) => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const check = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.dashboard.json'], { encoding: 'utf8' });
    t.equal(check.status, 0, `tsc -p tsconfig.dashboard.json: ${check.stdout}${check.stderr}`);
    for (const name of SCRIPTS)
      t.match(readFileSync(`src/api/dashboard/${name}`, 'utf8'), /^\/\/ @ts-check\n/, `the checker is on for ${name}`);
    const config = JSON.parse(readFileSync('tsconfig.dashboard.json', 'utf8')) as {
      compilerOptions: { checkJs: boolean; strict: boolean; lib: string[] };
      files: string[];
    };
    t.same(
      [config.compilerOptions.checkJs, config.compilerOptions.strict, config.compilerOptions.lib.includes('DOM')],
      [true, true, true],
    );
    t.same(
      config.files,
      SCRIPTS.map((name) => `src/api/dashboard/${name}`),
    );
    const { api } = await startApi(t);
    for (const name of SCRIPTS) {
      const served = await raw(api.url, 'GET', `/dashboard/${name}`);
      t.equal(served.status, 200);
      t.match(served.headers['content-type'], /^text\/javascript/);
      t.equal(served.text, readFileSync(`src/api/dashboard/${name}`, 'utf8'), `${name} served byte for byte`);
    }
  },
);

t.test(
  'Chromium is found from the environment, the usual paths, then playwright-core, else a skip naming the package',
  async (t) => {
    const lookup = (env: Record<string, string>, present: string[], cache?: string) =>
      findChromium({ env, exists: (p) => present.includes(p), playwrightPath: () => cache });
    t.same(
      lookup({ TORUS_CHROMIUM: '/opt/c/chrome', CHROME_PATH: '/x' }, ['/opt/c/chrome', '/usr/bin/chromium']),
      { path: '/opt/c/chrome', from: '$TORUS_CHROMIUM' },
      'TORUS_CHROMIUM first',
    );
    t.same(lookup({ CHROME_PATH: '/x/chrome' }, ['/x/chrome', '/usr/bin/chromium']), {
      path: '/x/chrome',
      from: '$CHROME_PATH',
    });
    t.same(
      lookup({ TORUS_CHROMIUM: '/gone' }, ['/usr/bin/chromium']),
      { missing: '$TORUS_CHROMIUM=/gone does not exist' },
      'a wrong explicit path is reported, not replaced',
    );
    t.same(lookup({}, ['/usr/bin/chromium-browser', '/usr/bin/google-chrome']), {
      path: '/usr/bin/chromium-browser',
      from: '/usr/bin/chromium-browser',
    });
    t.same(lookup({}, ['/usr/bin/google-chrome']), { path: '/usr/bin/google-chrome', from: '/usr/bin/google-chrome' });
    t.same(lookup({}, ['/cache/chrome'], '/cache/chrome'), { path: '/cache/chrome', from: "playwright-core's cache" });
    const none = lookup({}, [], '/cache/not-downloaded');
    t.ok(
      'missing' in none &&
        /apt-get install -y chromium/.test(none.missing) &&
        /Debian package chromium/.test(none.missing),
      'names the Debian package',
    );
    t.equal(CHROMIUM_PATHS[0], '/usr/bin/chromium', "Debian's path is the first usual one");
  },
);
