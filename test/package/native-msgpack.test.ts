/**
 * msgpackr's native extractor comes from its prebuilt optional package (@msgpackr-extract/msgpackr-extract-<os>-<arch>),
 * not from an install script: package.json's allowScripts denies msgpackr-extract's (which would compile from
 * source when no prebuilt matches) and esbuild's (which only re-checks the binary its optional package ships).
 * So a clean `npm ci` under npm 11 still has the fast path on the platforms with a prebuilt.
 */
import t from 'tap';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { isNativeAccelerationEnabled } from 'msgpackr';

const require = createRequire(import.meta.url);
const prebuilt = `@msgpackr-extract/msgpackr-extract-${process.platform}-${process.arch}`;
const hasPrebuilt = (() => {
  try {
    require.resolve(`${prebuilt}/package.json`);
    return true;
  } catch {
    return false;
  }
})();

t.test('allowScripts decides every dependency install script', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    allowScripts?: Record<string, boolean>;
  };
  t.same(
    pkg.allowScripts,
    { esbuild: false, 'msgpackr-extract': false },
    'both run from their prebuilt optional packages',
  );
});

t.test(
  'msgpackr runs natively from the prebuilt package',
  { skip: hasPrebuilt ? false : `no ${prebuilt} for this platform` },
  async (t) => {
    t.equal(isNativeAccelerationEnabled, true, `${prebuilt} loaded`);
  },
);
