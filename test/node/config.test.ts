import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../../src/protocols/errors.js';
import { DEFAULT_PORT, parseNodeArgs, type NodeConfig } from '../../src/node/config.js';
import { actorSpecs } from '../../src/node/actor-specs.js';

const dir = mkdtempSync(join(tmpdir(), 'torus-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

/** The actor specs a node started with this configuration would run (open mode, a fixed identity). */
const specsFor = (config: NodeConfig) =>
  actorSpecs({
    config,
    identity: { nodeId: 'n-1', incarnation: 1, createdAt: 0 },
    credential: { mode: 'open' },
    startedAt: 0,
    apiPort: 0,
    version: 'test',
  });

t.test('defaults', async (t) => {
  const { config, help } = parseNodeArgs([], {});
  t.equal(help, false);
  t.equal(config.port, DEFAULT_PORT);
  t.equal(config.cluster, 'torus');
  t.equal(config.logLevel, 'warn');
  t.equal(config.mdns, true);
  t.same(config.peers, []);
});

t.test('flags', async (t) => {
  const { config } = parseNodeArgs(
    [
      '--port',
      '0',
      '--name',
      'mac-1',
      '--peers',
      '10.77.0.2:52515, 10.77.0.3:52515',
      '--iface-type',
      'en5=thunderbolt',
      '--iface-type',
      'veth0=ethernet',
      '--secret',
      's3cret',
      '--no-mdns',
      '--log-level',
      'debug',
    ],
    {},
  );
  t.equal(config.port, 0);
  t.equal(config.name, 'mac-1');
  t.same(config.peers, ['10.77.0.2:52515', '10.77.0.3:52515']);
  t.same(config.ifaceTypes, { en5: 'thunderbolt', veth0: 'ethernet' });
  t.equal(config.secret, 's3cret');
  t.equal(config.mdns, false);
  t.equal(config.logLevel, 'debug');
});

t.test('config file, with flags winning', async (t) => {
  const secretFile = file('secret', 'from-file\n');
  const path = file(
    'ok.json',
    JSON.stringify({ port: 6000, cluster: 'lab', ifaceTypes: { eth1: 'wifi' }, secretFile, peers: ['10.77.0.9:6000'] }),
  );
  const { config } = parseNodeArgs(['--config', path, '--port', '7000'], {});
  t.equal(config.port, 7000, 'flag wins');
  t.equal(config.cluster, 'lab');
  t.same(config.ifaceTypes, { eth1: 'wifi' });
  t.equal(config.secret, 'from-file');
  t.same(config.peers, ['10.77.0.9:6000']);
});

t.test('profiler timings: defaults, flags and config keys, handed to the network profiler', async (t) => {
  const d = parseNodeArgs([], {}).config;
  t.equal(d.probeIntervalMs, 10_000, 'a liveness probe every 10 s by default');
  t.equal(d.confirmMeasureMs, 15_000, 'the confirmation pass 15 s after the last new link by default');
  const f = parseNodeArgs(['--probe-interval-ms', '2000', '--confirm-measure-ms', '0'], {}).config;
  t.equal(f.probeIntervalMs, 2000);
  t.equal(f.confirmMeasureMs, 0, '0 turns the confirmation pass off');
  const c = parseNodeArgs(
    ['--config', file('timings.json', '{"probeIntervalMs": 3000, "confirmMeasureMs": 4000}')],
    {},
  );
  t.same([c.config.probeIntervalMs, c.config.confirmMeasureMs], [3000, 4000], 'config keys');
  const specs = specsFor(f);
  t.match(
    specs.find((s) => s.name === 'network-profiler')?.options,
    { probeIntervalMs: 2000, confirmMeasureMs: 0 },
    'the profiler actor gets both',
  );
});

t.test('bad input names where it is', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--port', '70000'], /flag --port: expected a port number/],
    [['--peers', '10.77.0.2'], /flag --peers\[0\]: expected host:port/],
    [['--iface-type', 'eth0'], /expected NAME=TYPE/],
    [['--log-level', 'loud'], /--log-level: expected debug/],
    [['--failure-timeout-ms', '5'], /between 500 and 600000/],
    [['--probe-interval-ms', '100'], /flag --probe-interval-ms: expected milliseconds between 500 and 600000/],
    [['--confirm-measure-ms=-1'], /flag --confirm-measure-ms: expected milliseconds between 0 and 600000/],
    [['--config', file('probe.json', '{"probeIntervalMs": "often"}')], /config probeIntervalMs: expected milliseconds/],
    [['--secret-file', join(dir, 'missing')], /cannot read secret file/],
    [['--config', join(dir, 'missing.json')], /cannot read/],
    [['--config', file('bad.json', '{ nope')], /not valid JSON/],
    [['--config', file('arr.json', '[]')], /expected a JSON object/],
    [['--config', file('unknown.json', '{"prot": 1}')], /config prot: unknown option/],
    [
      ['--config', file('type.json', '{"ifaceTypes": {"eth0": "fast"}}')],
      /config ifaceTypes.eth0: unknown interface type "fast"/,
    ],
    [['--unknown'], /Unknown option/],
    [
      ['--config', file('open.json', '{"insecureOpen": true}'), '--secret', 'x'],
      /config insecureOpen: cannot be combined/,
    ],
    [['--insecure-open', '--secret', 'x'], /flag --insecure-open: cannot be combined/],
    [['--config', file('mdns.json', '{"mdns": "no"}')], /config mdns: expected true or false, got "no" in /],
  ];
  for (const [args, pattern] of cases) {
    t.throws(() => parseNodeArgs(args, {}), ValidationError, args.join(' '));
    t.throws(() => parseNodeArgs(args, {}), { message: pattern });
  }
});

t.test('runner files: rotation and retention from flags and config keys, bad values named', async (t) => {
  const d = parseNodeArgs([]).config;
  t.same(d.logRotation, { maxFiles: 10, maxFileBytes: 10 * 1024 * 1024 }, 'Nomad-like defaults');
  t.same(d.runRetention, { keepFinished: 50, maxAgeMs: 7 * 24 * 3_600_000, diskUsagePercent: 80 });
  const f = parseNodeArgs([
    '--log-max-files',
    '3',
    '--log-max-file-bytes',
    '65536',
    '--keep-finished-runs',
    '0',
    '--finished-run-max-age-hours',
    '0',
    '--gc-disk-usage-percent',
    '95',
  ]).config;
  t.same(f.logRotation, { maxFiles: 3, maxFileBytes: 65536 });
  t.same(f.runRetention, { keepFinished: 0, maxAgeMs: 0, diskUsagePercent: 95 });
  t.throws(() => parseNodeArgs(['--log-max-file-bytes', '10']), /log-max-file-bytes/, 'below 1024 refused');
  t.throws(() => parseNodeArgs(['--gc-disk-usage-percent', '0']), /gc-disk-usage-percent/);
});

t.test(
  '--memory-limit: a size in binary or decimal units, or bytes; config key memoryLimit; bad values named',
  async (t) => {
    t.equal(parseNodeArgs([]).config.memoryLimitBytes, undefined, 'no limit by default');
    t.equal(parseNodeArgs(['--memory-limit', '24MiB']).config.memoryLimitBytes, 24 * 2 ** 20);
    t.equal(parseNodeArgs(['--memory-limit=1.5GiB']).config.memoryLimitBytes, 1.5 * 2 ** 30);
    t.equal(parseNodeArgs(['--memory-limit', '8GB']).config.memoryLimitBytes, 8e9);
    t.equal(parseNodeArgs(['--memory-limit', '4194304']).config.memoryLimitBytes, 4 * 2 ** 20, 'bytes');
    const cfg = file('memory.json', JSON.stringify({ memoryLimit: '64MiB' }));
    t.equal(parseNodeArgs(['--config', cfg]).config.memoryLimitBytes, 64 * 2 ** 20, 'config key');
    t.equal(
      parseNodeArgs(['--config', cfg, '--memory-limit', '32MiB']).config.memoryLimitBytes,
      32 * 2 ** 20,
      'flag wins',
    );
    for (const bad of ['0', '12', 'lots', '-1GiB', '1 PiB', '1000KiB'])
      t.throws(() => parseNodeArgs(['--memory-limit', bad]), { message: /memory-limit/ }, bad);
    const badCfg = file('memory-bad.json', JSON.stringify({ memoryLimit: true }));
    t.throws(() => parseNodeArgs(['--config', badCfg]), { message: /memoryLimit/ }, 'config value named');
  },
);

t.test(
  '--actor-heap: a heap budget per actor thread, 512 MiB by default, off for V8 default; bad values named',
  async (t) => {
    const none = {};
    t.equal(parseNodeArgs([], none).config.actorHeapMb, 512, 'the default budget');
    t.equal(parseNodeArgs(['--actor-heap', '1GiB'], none).config.actorHeapMb, 1024);
    t.equal(parseNodeArgs(['--actor-heap=256MiB'], none).config.actorHeapMb, 256);
    t.equal(parseNodeArgs(['--actor-heap', 'off'], none).config.actorHeapMb, undefined, "off: V8's own limit");
    t.equal(parseNodeArgs([], { TORUS_ACTOR_HEAP: 'off' }).config.actorHeapMb, undefined, 'the environment');
    t.equal(parseNodeArgs([], { TORUS_ACTOR_HEAP: '128MiB' }).config.actorHeapMb, 128);
    t.equal(
      parseNodeArgs(['--actor-heap', '768MiB'], { TORUS_ACTOR_HEAP: 'off' }).config.actorHeapMb,
      768,
      'flag wins',
    );
    const cfg = file('heap.json', JSON.stringify({ actorHeap: '2GiB' }));
    t.equal(parseNodeArgs(['--config', cfg], none).config.actorHeapMb, 2048, 'config key');
    for (const bad of ['0', '16MiB', 'lots', 'on', '-1GiB'])
      t.throws(() => parseNodeArgs([`--actor-heap=${bad}`], none), { message: /actor-heap.*at least 64MiB/ }, bad);
    t.throws(() => parseNodeArgs([], { TORUS_ACTOR_HEAP: 'tiny' }), { message: /TORUS_ACTOR_HEAP/ }, 'env value named');
    const badCfg = file('heap-bad.json', JSON.stringify({ actorHeap: 12 }));
    t.throws(() => parseNodeArgs(['--config', badCfg], none), { message: /actorHeap/ }, 'config value named');
    const specsOf = (args: string[]) => specsFor(parseNodeArgs(args, none).config);
    t.same(
      specsOf(['--actor-heap', '256MiB']).map((s) => [s.name, s.heapLimitMb, s.youngGenerationMb]),
      ['topology-keeper', 'network-profiler', 'placement-planner', 'runner-supervisor'].map((n) => [n, 256, 16]),
      'every actor thread gets the budget',
    );
    t.ok(
      specsOf(['--actor-heap', 'off']).every((s) => s.heapLimitMb === undefined && s.youngGenerationMb === undefined),
      'off: no budget',
    );
  },
);

t.test('--idle-gc-minutes: 5 by default, 0 turns it off, every actor thread gets it; bad values named', async (t) => {
  const none = {};
  t.equal(parseNodeArgs([], none).config.idleGcMinutes, 5, 'the default');
  t.equal(parseNodeArgs(['--idle-gc-minutes', '0'], none).config.idleGcMinutes, 0, 'off');
  t.equal(parseNodeArgs(['--idle-gc-minutes=30'], none).config.idleGcMinutes, 30);
  const cfg = file('idle-gc.json', JSON.stringify({ idleGcMinutes: 2 }));
  t.equal(parseNodeArgs(['--config', cfg], none).config.idleGcMinutes, 2, 'config key');
  t.equal(parseNodeArgs([], { TORUS_IDLE_GC_MINUTES: '0' }).config.idleGcMinutes, 0, 'the environment');
  t.equal(parseNodeArgs(['--idle-gc-minutes=7'], { TORUS_IDLE_GC_MINUTES: '0' }).config.idleGcMinutes, 7, 'flag wins');
  t.throws(() => parseNodeArgs([], { TORUS_IDLE_GC_MINUTES: 'x' }), { message: /TORUS_IDLE_GC_MINUTES/ }, 'env named');
  for (const bad of ['-1', '1.5', 'soon', '10081'])
    t.throws(
      () => parseNodeArgs([`--idle-gc-minutes=${bad}`], none),
      { message: /idle-gc-minutes.*from 0 to 10080/ },
      bad,
    );
  const badCfg = file('idle-gc-bad.json', JSON.stringify({ idleGcMinutes: '5m' }));
  t.throws(() => parseNodeArgs(['--config', badCfg], none), { message: /idleGcMinutes/ }, 'config value named');
  t.same(
    specsFor(parseNodeArgs(['--idle-gc-minutes', '3'], none).config).map((s) => [s.name, s.idleCollectionMs]),
    ['topology-keeper', 'network-profiler', 'placement-planner', 'runner-supervisor'].map((n) => [n, 180_000]),
    'every actor thread gets the interval',
  );
});
