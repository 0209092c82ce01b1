/**
 * Where the API listens. A fixed port is taken as given. Port 0 ("any free port") must also leave the next port
 * free, because the cluster port is the API port + 1 (peers derive it from the API address they know). The OS's
 * own pick comes from the ephemeral range, which every outgoing connection on the machine also draws from, so
 * its successor is often taken a moment later; the pair is drawn instead from below the ephemeral range of
 * Linux (32768) and macOS (49152), where only listeners live, and the successor is checked before returning.
 */
import net, { type Server } from 'node:net';
import { TorusError } from '../protocols/errors.js';

const PAIR_RANGE = { from: 20_000, to: 32_000 } as const;
const PAIR_ATTEMPTS = 64;

function listenOnce(server: Server, port: number, host: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException): void => resolve(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(undefined);
    });
  });
}

async function portFree(port: number, host: string): Promise<boolean> {
  const probe = net.createServer();
  const error = await listenOnce(probe, port, host);
  if (error) return false;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return true;
}

const closeServer = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/** Listens on `port` (0: a free port whose successor is free too); rejects with the listen error otherwise. */
export async function listenApi(
  server: Server,
  port: number,
  host: string,
  candidate: () => number = () => PAIR_RANGE.from + Math.floor(Math.random() * (PAIR_RANGE.to - PAIR_RANGE.from)),
): Promise<void> {
  if (port !== 0) {
    const error = await listenOnce(server, port, host);
    if (error) throw error;
    return;
  }
  for (let attempt = 0; attempt < PAIR_ATTEMPTS; attempt++) {
    const pick = candidate();
    const error = await listenOnce(server, pick, host);
    if (error) {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') continue;
      throw error;
    }
    if (await portFree(pick + 1, host)) return;
    await closeServer(server);
  }
  throw new TorusError(
    'TORUS_CONFIG_INVALID',
    `--port 0: no free pair of ports (API, API + 1 for the cluster) on ${host} in ${PAIR_RANGE.from}-${PAIR_RANGE.to} after ${PAIR_ATTEMPTS} tries`,
    { host },
  );
}
