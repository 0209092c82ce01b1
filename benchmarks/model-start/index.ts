/**
 * Model start on a shaped lab, side by side in one run (docs/artifacts.md, "Benchmark: model start"):
 *   a lab of 5 real nodes: a 4 Gbit/s cable ring h0-h1-h2-h3-h0 beside a 1 Gbit/s LAN, h4 on the LAN only at
 *   500 Mbit/s; a Llama-style model of --size (benchmarks/model-fixture) added on h0, its only holder;
 *   - whole artifact: an exec instance on 4 nodes whose workload lists the model as `artifacts: [id]` (today's
 *     chain: every placed node receives all of it);
 *   - model: the same as `model: id` (placed from the record as a 4-stage pipeline, each node fetching its stage);
 *   - heal: kill -9 of one stage's node; the time until every rank runs again, what the replacement fetched and
 *     what each survivor fetched after the kill (target 0: survivors keep their stages).
 * Each run: wall time from POST /v1/instances to every runner started (the runner checks its directory and
 * records the time), the link bound for those needs over the links measured before the POST, the CPU bound
 * (every byte received × what a verified byte costs on this machine ÷ its cores: the lab's hosts share them), which
 * of the two holds, and per node the bytes it received against its shard's.
 *   npm run bench -- model-start [--size 1GiB] [--rate 1gbit] [--ring-rate 4gbit] [--slow-rate 500mbit]
 *                                [--no-whole] [--no-model] [--no-kill] [--json]
 *   npm run bench -- model-start --cpu-cost     only what a verified byte costs in CPU here
 * Needs root (namespaces); says so and exits 0 otherwise.
 */
import { availableParallelism } from 'node:os';
import { BenchOwner, Lab, nodeUnavailableReason } from '../../src/lab/index.js';
import { cpuBoundSeconds, describeLimit } from '../../src/artifacts/distribution-bound.js';
import { parseBytes } from '../../src/cli/table.js';
import { printTable, type BenchRow } from '../table.js';
import { args, flag } from '../args.js';
import { measureVerifiedByteCost, type CpuCost } from './cpu-cost.js';
import { phaseRows } from './phases.js';
import { killAndHeal, placeAndStart, reset, startModelLab, type PlacedNode, type RunResult } from './harness.js';

const json = args.includes('--json');
const say = (line: string): void => void process.stderr.write(`[model-start] ${line}\n`);
const MiB = 2 ** 20;
const mib = (b: number): number => +(b / MiB).toFixed(1);

function costRow(cost: CpuCost): BenchRow {
  return {
    'bytes verified': cost.bytes,
    'chunk KiB': cost.chunkSize / 1024,
    'CPU ms/MiB': +cost.msPerMiB.toFixed(3),
    'wall s': +cost.wallSeconds.toFixed(3),
    CPUs: availableParallelism(),
  };
}

/** One run's row: wall time against both bounds, the tighter named and the ratio to it. */
function runRow(name: string, r: RunResult, cost: CpuCost, names: (node: string) => string): BenchRow {
  if (!r.ok) return { case: name, 'wall s': null, note: `not run: ${r.reason}` };
  const link = r.bound?.seconds ?? 0;
  const cpu = cpuBoundSeconds(r.bound?.receivedBytes ?? 0, cost.secondsPerByte, availableParallelism());
  const tighter = Math.max(link, cpu);
  return {
    case: name,
    'wall s': +r.seconds.toFixed(2),
    'link bound s': +link.toFixed(2),
    'CPU bound s': +cpu.toFixed(2),
    held: link >= cpu ? 'link' : 'CPU',
    'x the tighter': tighter > 0 ? +(r.seconds / tighter).toFixed(2) : null,
    'link limit': r.bound ? describeLimit(r.bound, names).replace(/^[\d.]+ s \((.*)\)$/, '$1') : '',
    'received MiB': r.nodes.some((n) => n.receivedBytes === null)
      ? null
      : mib(r.nodes.reduce((s, n) => s + (n.receivedBytes ?? 0), 0)),
    // Every node process's CPU over the run, against the CPU the bound counts (received bytes × cost).
    'nodes CPU s': r.phases ? +r.phases.cpuSeconds.toFixed(2) : null,
    'bound CPU s': +(cpu * availableParallelism()).toFixed(2),
  };
}

function nodeRows(name: string, nodes: readonly PlacedNode[], names: (node: string) => string): BenchRow[] {
  return nodes.map((n) => ({
    case: name,
    node: names(n.node),
    rank: n.rank,
    layers: n.layers,
    'shard MiB': mib(n.shardBytes),
    'its chunks MiB': mib(n.chunkBytes),
    'received MiB': n.receivedBytes === null ? 'unknown' : mib(n.receivedBytes),
    'received / shard':
      n.shardBytes > 0 && n.receivedBytes !== null ? +(n.receivedBytes / n.shardBytes).toFixed(3) : null,
  }));
}

async function main(): Promise<void> {
  const size = flag('--size') ?? '1GiB';
  const bytes = parseBytes(size);
  if (bytes === undefined) throw new Error(`--size: expected a size such as 1GiB, got ${size}`);
  const measure = (chunkSize: number): Promise<CpuCost> => {
    say(
      `measuring what a verified byte costs in CPU in ${chunkSize / 1024} KiB chunks (the real writer: SHA-256, O_DIRECT write, sync)`,
    );
    return measureVerifiedByteCost(128 * MiB, chunkSize);
  };
  if (args.includes('--cpu-cost')) {
    printTable(
      'what a verified byte costs in CPU on this machine',
      [costRow(await measure(4 * MiB)), costRow(await measure(256 * 1024)), costRow(await measure(64 * 1024))],
      json,
    );
    return;
  }
  const why = Lab.unavailableReason() ?? nodeUnavailableReason();
  if (why) {
    say(`skipped: ${why}`);
    return;
  }
  const owner = new BenchOwner();
  const runs: BenchRow[] = [];
  const perNode: BenchRow[] = [];
  const phases: BenchRow[] = [];
  try {
    const m = await startModelLab(owner, {
      bytes,
      lanRate: flag('--rate') ?? '1gbit',
      ringRate: flag('--ring-rate') ?? '4gbit',
      slowRate: flag('--slow-rate') ?? '500mbit',
      progress: say,
    });
    // In the model's own chunk size (a model's is chosen from its smallest layer): per-chunk work counts too.
    const cost = await measure(m.manifest.chunkSize);
    const names = (id: string): string =>
      id === 'holders' ? 'the holders' : (m.cluster.nodes.find((n) => n.id === id)?.name ?? id);
    let healed: RunResult | undefined;
    let healMode: 'model' | 'whole' = 'model';
    if (!args.includes('--no-whole')) {
      say('whole artifact: artifacts: [id], today’s chain');
      const whole = await placeAndStart(m, { instanceId: 'whole', mode: 'whole' });
      runs.push(runRow('whole artifact (artifacts: [id]), chain', whole, cost, names));
      perNode.push(...nodeRows('whole', whole.nodes, names));
      if (whole.phases) phases.push(...phaseRows('whole', whole.phases, names));
      await m.holder.fetch('/v1/instances/whole', { method: 'DELETE' });
      if (whole.ok) {
        // The same job again with every placed node holding the model: what starting costs without moving a byte.
        const held = await placeAndStart(m, { instanceId: 'held', mode: 'whole' });
        runs.push({
          case: 'the same, every node holding it (start cost, no bytes)',
          'wall s': held.ok ? +held.seconds.toFixed(2) : null,
          ...(held.ok ? {} : { note: `not run: ${held.reason}` }),
        });
        await m.holder.fetch('/v1/instances/held', { method: 'DELETE' });
      }
      await reset(m, 'whole');
    }
    if (!args.includes('--no-model')) {
      say('model: model: id, each node its stage');
      const run = await placeAndStart(m, { instanceId: 'model', mode: 'model' });
      runs.push(runRow('model (model: id), 4-stage pipeline', run, cost, names));
      perNode.push(...nodeRows('model', run.nodes, names));
      if (run.phases) phases.push(...phaseRows('model', run.phases, names));
      if (run.ok) {
        // The same model placed again, every stage already held: a start's fixed cost, apart from the transfer.
        await m.holder.fetch('/v1/instances/model', { method: 'DELETE' });
        const held = await placeAndStart(m, { instanceId: 'model-held', mode: 'model' });
        runs.push({
          case: 'the same model again, every stage held (start cost, no bytes)',
          'wall s': held.ok ? +held.seconds.toFixed(2) : null,
          'received MiB':
            held.ok && held.nodes.every((n) => n.receivedBytes !== null)
              ? mib(held.nodes.reduce((s, n) => s + (n.receivedBytes ?? 0), 0))
              : null,
          'nodes CPU s': held.phases ? +held.phases.cpuSeconds.toFixed(2) : null,
          ...(held.ok ? {} : { note: `not run: ${held.reason}` }),
        });
        if (held.phases) phases.push(...phaseRows('model, held', held.phases, names));
        // The heal runs on the instance that is placed now, unless the holder is its only spare: a holder has every
        // stage, so its heal would fetch nothing and measure nothing. Then the heal gets an instance that includes
        // the holder, and its spare is a node that has to fetch the lost stage.
        if (held.ok && held.nodes.some((n) => n.node === m.holder.id)) healed = held;
        else if (held.ok) {
          await m.holder.fetch('/v1/instances/model-held', { method: 'DELETE' });
          const withHolder = await placeAndStart(m, {
            instanceId: 'model-heal',
            mode: 'model',
            requiredNodes: [m.holder.id],
          });
          if (withHolder.ok) healed = withHolder;
          else say(`the heal's instance with the holder was not placed: ${withHolder.reason}`);
        }
      } else if (!args.includes('--no-whole')) {
        // This build cannot place from the model yet: the heal is measured on the whole-artifact job instead.
        say('model placement not available here; the heal runs on the whole-artifact job');
        const again = await placeAndStart(m, { instanceId: 'whole-heal', mode: 'whole' });
        if (again.ok) [healed, healMode] = [again, 'whole'];
      }
    }
    if (healed && !args.includes('--no-kill')) {
      say('heal: kill -9 of one stage’s node');
      const heal = await killAndHeal(m, healed, healMode);
      const of = healMode === 'model' ? 'its stage' : 'the whole artifact';
      runs.push(
        heal.ok
          ? {
              case: `${healMode}: kill -9 ${names(heal.killed)}, until the job runs again`,
              'wall s': +heal.seconds.toFixed(2),
              'replacement MiB': heal.replacement?.receivedBytes == null ? null : mib(heal.replacement.receivedBytes),
              // target 0: a kept stage re-fetches nothing (docs/placement.md, "Re-placing a model pipeline")
              'survivors MiB': heal.others.some((n) => n.receivedBytes === null)
                ? null
                : mib(heal.others.reduce((s, n) => s + (n.receivedBytes ?? 0), 0)),
              note: `${
                heal.replacement
                  ? `replacement ${names(heal.replacement.node)} fetched ${heal.replacement.receivedBytes === null ? 'unknown' : mib(heal.replacement.receivedBytes)} MiB for ${of} of ${mib(heal.replacement.shardBytes)} MiB`
                  : 'no new node in the plan'
              }; survivors fetched ${heal.others.map((n) => `${names(n.node)} ${n.receivedBytes === null ? 'unknown' : mib(n.receivedBytes)}`).join(', ')} MiB; ${/^kept the stages/.test(heal.replacedWhy ?? '') ? 'stages kept' : 'fresh plan'}`,
            }
          : {
              case: `${healMode}: kill -9 ${names(heal.killed)}`,
              'wall s': null,
              note: `did not run again: ${heal.reason}`,
            },
      );
      if (heal.replacement)
        perNode.push(...nodeRows(`${healMode}, after kill: replacement`, [heal.replacement], names));
      perNode.push(...nodeRows(`${healMode}, after kill: others (new fetches)`, heal.others, names));
    }
    printTable(
      `model start: ${size} model held by h0, 4 stages on a 5-node lab (4 Gbit/s cable ring beside a 1 Gbit/s LAN, h4 at 500 Mbit/s)`,
      runs,
      json,
      `CPU bound: bytes all receivers take in × ${cost.msPerMiB.toFixed(2)} ms CPU per MiB (the real writer in the model's ${m.manifest.chunkSize / 1024} KiB chunks, measured before the runs) ÷ ${availableParallelism()} CPUs shared by every lab host. x the tighter: wall ÷ the larger bound.`,
    );
    printTable('model start: per node, bytes received against its shard', perNode, json);
    printTable(
      'model start: where the time went, per node (seconds since the POST)',
      phases,
      json,
      'committed: the POST answered; transfer start: the node asked for its stage (its first chunk requests follow); stage done: every chunk of it durable; runner start: its command ran. CPU s: the node process (all its threads) over the run.',
    );
  } catch (error) {
    owner.ok = false;
    throw error;
  } finally {
    await owner.close();
  }
}

await main().catch((error: unknown) => {
  process.stderr.write(`model-start benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
