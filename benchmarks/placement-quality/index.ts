/**
 * Placement quality: `--lab` measures every feasible option on a shaped namespace lab (lab.ts); without it, the
 * simulated desks (simulated.ts).
 *   npm run bench -- placement-quality [--quick] [--json]          simulated desks
 *   npm run bench -- placement-quality --lab [--rounds N] [--json]  the lab, measured (root)
 */
if (process.argv.includes('--lab')) await import('./lab.js');
else await import('./simulated.js');
