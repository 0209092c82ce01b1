/**
 * `torus plan`: offline placement. Reads a state file and a request file, prints the plan (or, with
 * --previews, every option) as JSON on stdout and exits 0; on bad input or a refusal prints
 * {"error":{"message",...}} on stdout and exits 2. The planning itself is the pure core in src/actors/placement-planner.
 */
import { parsePortRange, type PortRange } from '../actors/placement-planner/search/ports.js';
import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { asTorusError, TorusError } from '../protocols/errors.js';
import { decodePlacementInput } from '../actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../actors/placement-planner/search/plan-placement.js';
import { isRefusal } from '../actors/placement-planner/search/plan-result.js';
import { previewPlacements } from '../actors/placement-planner/search/previews.js';

export interface PlanCommandIo {
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
}

export const PLAN_USAGE = `usage: torus plan --state STATE.json --request REQUEST.json [--previews] [--seed N] [--reserved-port P]... [--instance-ports MIN-MAX]
  Prints the placement plan as JSON (exit 0), or {"error":{"message":...}} (exit 2).
  --previews        every option (pipeline/tensor x ring/jaccl x node counts), each a plan or a refusal
  --seed N          seed for the port, instance id and search (0..4294967295; default: random, echoed in the plan)
  --reserved-port P a port the instance must not use (repeatable; default 52415)
  --instance-ports MIN-MAX  where the instance's port is drawn from (default 10000-19999, as a node's)
  Formats: docs/placement.md
`;

interface PlanArgs {
  state: string;
  request: string;
  previews: boolean;
  seed?: number;
  reservedPorts: number[];
  portRange?: PortRange;
}

class UsageError extends TorusError {
  constructor(message: string) {
    super('TORUS_CONFIG_INVALID', message, { where: 'flag' });
  }
}

function parseArgs(args: readonly string[]): PlanArgs | 'help' {
  let state: string | undefined,
    request: string | undefined,
    seed: number | undefined,
    previews = false,
    portRange: PortRange | undefined;
  const reservedPorts: number[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--state':
        state = value();
        break;
      case '--request':
        request = value();
        break;
      case '--previews':
        previews = true;
        break;
      case '--seed': {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n > 0xffffffff)
          throw new UsageError(`--seed must be an integer from 0 to 4294967295, got ${JSON.stringify(v)}`);
        seed = n;
        break;
      }
      case '--reserved-port': {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n < 1 || n > 65535)
          throw new UsageError(`--reserved-port must be a port number, got ${JSON.stringify(v)}`);
        reservedPorts.push(n);
        break;
      }
      case '--instance-ports': {
        const range = parsePortRange(value());
        if (typeof range === 'string') throw new UsageError(`--instance-ports: ${range}`);
        portRange = range;
        break;
      }
      default:
        throw new UsageError(`unknown argument ${JSON.stringify(arg)} (see --help)`);
    }
  }
  if (!state) throw new UsageError('--state STATE.json is required');
  if (!request) throw new UsageError('--request REQUEST.json is required');
  return {
    state,
    request,
    previews,
    ...(seed !== undefined ? { seed } : {}),
    reservedPorts,
    ...(portRange ? { portRange } : {}),
  };
}

async function readJson(path: string, flag: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TorusError(
      'TORUS_CONFIG_INVALID',
      `cannot read ${flag} file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      { path },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new TorusError(
      'TORUS_CONFIG_INVALID',
      `${flag} file ${path} is not valid JSON: ${(error as Error).message}`,
      { path },
    );
  }
}

const print = (io: PlanCommandIo, value: unknown): void => {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

export async function runPlanCommand(
  args: string[],
  io: PlanCommandIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  try {
    const parsed = parseArgs(args);
    if (parsed === 'help') {
      io.stdout.write(PLAN_USAGE);
      return 0;
    }
    const state = decodePlacementInput(await readJson(parsed.state, '--state'), 'config', 'state');
    const requestJson = await readJson(parsed.request, '--request');
    refuseUnresolvedModel(requestJson);
    const request = decodePlacementRequest(requestJson, 'config', 'request');
    const options = {
      seed: parsed.seed ?? randomInt(0, 2 ** 31),
      ...(parsed.reservedPorts.length ? { reservedPorts: parsed.reservedPorts } : {}),
      ...(parsed.portRange ? { portRange: parsed.portRange } : {}),
    };
    if (parsed.previews) {
      print(io, { previews: previewPlacements(state, request, options) });
      return 0;
    }
    const result = planPlacement(state, request, options);
    if (isRefusal(result)) {
      const { message, kind, explanation } = result.refusal;
      print(io, { error: { message, code: 'TORUS_PLACEMENT_REFUSED', kind, explanation } });
      return 2;
    }
    print(io, result);
    return 0;
  } catch (error) {
    const e = asTorusError(error);
    print(io, { error: { message: e.message, code: e.code } });
    return 2;
  }
}

/**
 * The state file has no artifact records, so `plan` cannot read a model's: a request naming `model` must carry
 * what the record gives (docs/placement.md, "A model workload").
 */
function refuseUnresolvedModel(request: unknown): void {
  const w = (request as { workload?: Record<string, unknown> } | null)?.workload;
  if (!w || typeof w !== 'object' || w.model === undefined || w.model === null || w.modelBytes !== undefined) return;
  throw new TorusError(
    'TORUS_CONFIG_INVALID',
    "request.workload.model: torus plan reads no artifact records, so it cannot size a model: give memoryBytes and layers, and for the split by real bytes modelBytes ({layerBytes, embed, norm, head, all, tiedEmbeddings}: GET /v1/artifacts/ID's layerBytes and otherBytes), or preview on a node (torus place --model ID --preview)",
    { where: 'config', path: 'request.workload.model' },
  );
}

// Direct invocation (`node dist/cli/plan.js ...`), until and besides the `plan` subcommand of dist/main.js.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void runPlanCommand(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
