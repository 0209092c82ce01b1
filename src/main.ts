#!/usr/bin/env node
/**
 * `node dist/main.js [command] [options]` — the torus CLI. With no command (or `start`) it runs a node;
 * the other commands are thin clients of a running node's API, or offline tools (`plan`).
 */
import { ValidationError } from './protocols/errors.js';
import { commandsHelp, type CommandName } from './cli/command-table.js';
import { execWithFewerMallocArenas } from './native/malloc-arenas.js';
import { NODE_USAGE, parseNodeArgs } from './node/config.js';
import type { TorusNode } from './node/start-node.js';

type Command = (args: string[]) => Promise<number>;

/** `--help`: how to run a node, then every command of the table below. */
const HELP = `${NODE_USAGE}\n\n${commandsHelp()}`;

const COMMANDS: Record<CommandName, Command> = {
  start: runNode,
  plan: async (args) => (await import('./cli/plan.js')).runPlanCommand(args),
  status: async (args) => (await import('./cli/status.js')).runStatusCommand(args),
  place: async (args) => (await import('./cli/place.js')).runPlaceCommand(args),
  run: async (args) => (await import('./cli/run.js')).runRunCommand(args),
  instances: async (args) => (await import('./cli/instances.js')).runInstancesCommand(args),
  delete: async (args) => (await import('./cli/delete.js')).runDeleteCommand(args),
  peers: async (args) => (await import('./cli/peers.js')).runPeersCommand(args),
  measure: async (args) => (await import('./cli/measure.js')).runMeasureCommand(args),
  calibrate: async (args) => (await import('./cli/calibrate.js')).runCalibrateCommand(args),
  bench: runBench,
  token: async (args) => (await import('./cli/token.js')).runTokenCommand(args),
  members: async (args) => (await import('./cli/members.js')).runMembersCommand(args),
  artifacts: async (args) => (await import('./cli/artifacts.js')).runArtifactsCommand(args),
};

async function runBench(args: string[]): Promise<number> {
  const [what, ...rest] = args;
  if (what === 'pipeline') return (await import('./cli/bench-pipeline.js')).runBenchPipelineCommand(rest);
  if (what !== 'ring') {
    process.stderr.write(
      'Usage: node dist/main.js bench ring [--live --api URL | lab options] | bench pipeline (see --help)\n',
    );
    return 2;
  }
  if (rest.includes('--live'))
    return (await import('./cli/bench-ring-live.js')).runBenchRingLiveCommand(rest.filter((a) => a !== '--live'));
  return (await import('./cli/bench-ring.js')).runBenchRingCommand(rest);
}

async function runNode(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseNodeArgs>;
  try {
    parsed = parseNodeArgs(args);
  } catch (error) {
    if (error instanceof ValidationError) {
      process.stderr.write(`torus: ${error.message}\n\n${HELP}\n`);
      return 2;
    }
    throw error;
  }
  if (parsed.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // Before any thread starts: on Linux this replaces the process (same pid) with one that has MALLOC_ARENA_MAX set.
  execWithFewerMallocArenas();
  // Signals are handled from the first moment: one that arrives while the actors start is remembered and the
  // node shuts down in order as soon as it is up (the default action would kill it half-started).
  let signals = 0;
  let node: TorusNode | undefined;
  let pendingSignal: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      process.stderr.write(`torus: second ${signal}, exiting now\n`);
      void (node ? node.runtime.kill() : Promise.resolve()).finally(() => process.exit(130));
      return;
    }
    process.stderr.write(`torus: ${signal}, shutting down (send again to exit at once)\n`);
    if (node) void node.shutdown(signal);
    else pendingSignal = signal;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { startNode } = await import('./node/start-node.js');
  const { startBanner, credentialWarnings } = await import('./node/start-banner.js');
  for (const line of credentialWarnings(parsed.config)) process.stderr.write(`${line}\n`);
  node = await startNode(parsed.config);
  process.stdout.write(
    startBanner({
      nodeId: node.identity.nodeId,
      incarnation: node.identity.incarnation,
      host: node.api.host,
      port: node.api.port,
      config: parsed.config,
      credential: node.credential,
      fingerprint: node.api.fingerprint,
    }),
  );
  if (pendingSignal) void node.shutdown(pendingSignal);
  return node.closed;
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first.startsWith('-')) return runNode(argv);
  if (first === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, first) ? COMMANDS[first as CommandName] : undefined;
  if (!command) {
    process.stderr.write(`torus: unknown command ${JSON.stringify(first)}\n\n${HELP}\n`);
    return 2;
  }
  return command(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`torus: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
