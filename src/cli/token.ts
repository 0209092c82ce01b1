/**
 * `node dist/main.js token [--data-dir DIR] [--api]`: prints how another machine joins this node's cluster (the
 * secret saved in the data dir), or with `--api` the API bearer token (for `--token` / `TORUS_TOKEN` elsewhere).
 * Reads the data dir only; the node need not be running, but must have started once.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readApiTokenIn, readSecretIn } from '../protocols/data-dir-files.js';
import { joinCommand, lanAddress } from '../node/start-banner.js';
import { DEFAULT_PORT } from '../node/config.js';
import { processIo, type CliIo } from './api-client.js';

const USAGE = `Usage: node dist/main.js token [--data-dir DIR] [--port N] [--cluster NAME] [--api]

Prints the command another machine runs to join this node's cluster (its secret is the join token), or with
--api the bearer token for the HTTP API (use it as --token or TORUS_TOKEN on another machine).`;

export async function runTokenCommand(args: string[], io: CliIo = processIo): Promise<number> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'data-dir': { type: 'string' },
        port: { type: 'string' },
        cluster: { type: 'string' },
        api: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    io.stderr.write(`torus: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const dataDir =
    typeof values['data-dir'] === 'string'
      ? values['data-dir']
      : process.env.TORUS_DATA_DIR || join(homedir(), '.torus');
  if (values.api) {
    const token = readApiTokenIn(dataDir);
    if (!token) {
      io.stderr.write(`torus: no API token in ${dataDir} (start the node once, or pass --data-dir)\n`);
      return 1;
    }
    io.stdout.write(`${token}\n`);
    return 0;
  }
  const secret = readSecretIn(dataDir);
  if (!secret) {
    io.stderr.write(`torus: no cluster secret in ${dataDir} (start the node once, or pass --data-dir)\n`);
    return 1;
  }
  const port = typeof values.port === 'string' && /^\d+$/.test(values.port) ? Number(values.port) : DEFAULT_PORT;
  const cluster = typeof values.cluster === 'string' ? values.cluster : 'torus';
  io.stdout.write(`${joinCommand(secret, lanAddress() ?? '127.0.0.1', port, cluster)}\n`);
  return 0;
}
