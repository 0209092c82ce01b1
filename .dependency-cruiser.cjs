/**
 * The allowed directions between the folders of src/ (docs/architecture.md draws them). Imports point down:
 *
 *   main.ts, index.ts, cli/
 *   node/                      wiring: config, credentials, starting the actors
 *   bench/live/  api/          the live benchmarks; the HTTP server and dashboard
 *   bench/ring/  artifacts/    the lab ring benchmark; artifact store and transfer
 *   lab/                       network-namespace test hosts (tests and benchmarks)
 *   actors/<concern>/          one folder per concern; only topology-keeper's state is shared vocabulary
 *   ring/  http/               ring collectives; small HTTP helpers
 *   runtime/                   the actor runtime
 *   protocols/  native/        what crosses a boundary; what talks to the OS
 *
 * Run by .ci/run: `npx depcruise src --config .dependency-cruiser.cjs`.
 */
const layer = {
  protocols: [],
  native: ['protocols'],
  runtime: ['protocols', 'native'],
  http: ['protocols', 'runtime'],
  ring: ['protocols', 'native', 'runtime'],
  'actors/topology-keeper': ['protocols', 'native', 'runtime'],
  'actors/network-profiler': ['protocols', 'native', 'runtime', 'http', 'actors/topology-keeper'],
  'actors/placement-planner': ['protocols', 'native', 'runtime', 'actors/topology-keeper'],
  'actors/runner-supervisor': ['protocols', 'native', 'runtime', 'http', 'ring', 'actors/topology-keeper'],
  'actors/cluster': ['protocols', 'native', 'runtime', 'actors/topology-keeper'],
  lab: ['protocols', 'native', 'runtime'],
  artifacts: ['protocols', 'native', 'runtime', 'http', 'actors/topology-keeper'],
  'bench/ring': ['protocols', 'native', 'runtime', 'ring', 'lab'],
  api: ['protocols', 'native', 'runtime', 'http', 'actors/*', 'artifacts'],
  'bench/live': ['protocols', 'native', 'runtime', 'http', 'actors/*', 'api', 'bench/ring'],
  node: ['protocols', 'native', 'runtime', 'http', 'ring', 'actors/*', 'artifacts', 'api', 'bench/live', 'lab'],
  cli: ['protocols', 'native', 'runtime', 'http', 'ring', 'actors/*', 'artifacts', 'api', 'bench/*', 'lab', 'node'],
};

const folderPattern = (f) => `^src/${f.replace('*', '[^/]+')}/`;
const forbidden = [
  { name: 'no-circular', severity: 'error', comment: 'no import cycles, between files or folders', from: {}, to: { circular: true } },
  ...Object.entries(layer).map(([folder, allowed]) => ({
    name: `${folder.replace('/', '-')}-imports-down`,
    severity: 'error',
    comment: `src/${folder}/ may import only ${allowed.length ? allowed.join(', ') : 'nothing else in src'} (and itself)`,
    from: { path: folderPattern(folder) },
    to: { path: '^src/', pathNot: [folderPattern(folder), ...allowed.map(folderPattern)] },
  })),
  // The planner's pure search runs anywhere (the pool, the CLI, benchmarks): it reads only vocabulary.
  {
    name: 'planner-search-is-pure',
    severity: 'error',
    comment: 'placement-planner/search/ imports neither the leader\'s command table, the planner thread, the runtime nor the OS',
    from: { path: '^src/actors/placement-planner/search/' },
    to: {
      path: '^src/(actors/placement-planner/|runtime/|native/|http/|ring/)',
      pathNot: '^src/actors/placement-planner/search/',
    },
  },
  // The planner thread plans; what a command means is the leader's (the leader asks the thread, never back).
  {
    name: 'planner-thread-not-leader',
    severity: 'error',
    comment: 'the planner thread (placement-planner/*.ts) does not import the leader\'s command table (placement-planner/leader/)',
    from: { path: '^src/actors/placement-planner/[^/]+\\.ts$' },
    to: { path: '^src/actors/placement-planner/leader/' },
  },
  // runner-supervisor/ is split by where the code runs: supervisor/ (the actor's thread), child/ (each runner
  // process, spawned by path, never imported), main/ (what the main thread serves to the API) and shared/ (the frame
  // channel and on-disk layout both ends agree on). Each side reaches another only through shared/.
  ...[
    ['supervisor', ['child', 'main']],
    ['child', ['supervisor', 'main']],
    ['main', ['supervisor', 'child']],
    ['shared', ['supervisor', 'child', 'main']],
  ].map(([side, others]) => ({
    name: `runner-supervisor-${side}-stays-on-its-side`,
    severity: 'error',
    comment: `runner-supervisor/${side}/ runs elsewhere than ${others.join(', ')}/ and may not import them`,
    from: { path: `^src/actors/runner-supervisor/${side}/` },
    to: { path: `^src/actors/runner-supervisor/(${others.join('|')}|worker\\.ts|index\\.ts)` },
  })),
  {
    name: 'nothing-imports-the-entry-points',
    severity: 'error',
    from: {},
    to: { path: '^src/(main|index)\\.ts$' },
  },
];

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/api/dashboard/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
