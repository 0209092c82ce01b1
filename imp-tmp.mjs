// usage: node imp.mjs <file-or-spec> ...  : times sequential imports in one fresh process
import { pathToFileURL } from 'node:url';
const out = [];
for (const spec of process.argv.slice(2)) {
  const c0 = process.cpuUsage(); const t0 = performance.now();
  await import(spec.startsWith('/') ? pathToFileURL(spec).href : spec);
  const t1 = performance.now(); const c = process.cpuUsage(c0);
  out.push(`${spec.split('/').slice(-2).join('/')}: wall ${(t1-t0).toFixed(1)} ms cpu ${((c.user+c.system)/1000).toFixed(1)} ms`);
}
console.log(out.join(' | '));
