/**
 * Child-process entry of one benchmark rank (spawned in a lab namespace or on loopback).
 * argv[2] = base64 JSON RankJob. Writes JSON lines on stdout:
 * {type:'ready', kernel, bidirectional} · {type:'row', row} · {type:'done', bytesRead, bytesCopied} · {type:'error', code, message}.
 */
import { asTorusError } from '../../protocols/errors.js';
import { RingCommunicator } from '../../ring/communicator.js';
import type { RingConnectOptions } from '../../ring/options.js';
import { runSweep, type SweepConfig } from './sweep.js';

export interface RankJob {
  readonly connect: RingConnectOptions;
  /** One sweep, or several run back to back on the same connection (e.g. one per dtype). */
  readonly sweep: SweepConfig | readonly SweepConfig[];
}

const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function main(): Promise<void> {
  const job = JSON.parse(Buffer.from(process.argv[2] ?? '', 'base64').toString('utf8')) as RankJob;
  let comm: RingCommunicator | null = null;
  try {
    comm = await RingCommunicator.connect(job.connect);
    say({ type: 'ready', kernel: comm.reducer.kind, bidirectional: comm.options.bidirectional });
    await comm.barrier();
    for (const sweep of Array.isArray(job.sweep) ? job.sweep : [job.sweep])
      await runSweep(comm, sweep as SweepConfig, (row) => say({ type: 'row', row }));
    await comm.barrier();
    say({ type: 'done', ...comm.stats });
  } catch (error) {
    const e = asTorusError(error);
    say({ type: 'error', code: e.code, message: e.message });
    process.exitCode = 1;
  } finally {
    await comm?.close();
  }
}

await main();
