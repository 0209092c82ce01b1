import { runBenchRingCommand } from '../../src/cli/bench-ring.js';
process.exitCode = await runBenchRingCommand(process.argv.slice(2));
