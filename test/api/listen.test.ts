import t from 'tap';
import net, { type AddressInfo, type Server } from 'node:net';
import { listenApi } from '../../src/api/listen.js';

const HOST = '127.0.0.1';
const portOf = (s: Server): number => (s.address() as AddressInfo).port;
const close = (s: Server): Promise<void> => new Promise((r) => s.close(() => r()));
async function occupy(port: number): Promise<Server> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(port, HOST, r));
  return s;
}

t.test('port 0: a port whose successor (the cluster port) is free, below the ephemeral range', async (t) => {
  for (let i = 0; i < 5; i++) {
    const api = net.createServer();
    await listenApi(api, 0, HOST);
    const port = portOf(api);
    t.ok(port >= 20_000 && port < 32_000, `${port} is outside the ephemeral range`);
    const cluster = await occupy(port + 1); // would throw EADDRINUSE if the successor were taken
    await close(cluster);
    await close(api);
  }
});

t.test('port 0: a candidate whose successor is taken is given up for the next one', async (t) => {
  const taken = await occupy(0);
  const blocked = portOf(taken) - 1; // the candidate whose successor is already bound
  const picks = [blocked];
  const api = net.createServer();
  await listenApi(api, 0, HOST, () => picks.shift() ?? 20_000 + Math.floor(Math.random() * 12_000));
  t.equal(picks.length, 0, 'the blocked candidate was tried');
  t.not(portOf(api), blocked, 'and given up: the API listens elsewhere');
  const again = await occupy(blocked).then(close, (e: NodeJS.ErrnoException) => e.code);
  t.equal(again, undefined, 'the blocked candidate is free again (not left bound)');
  await close(api);
  await close(taken);
});

t.test('a fixed port in use rejects with the listen error; port 0 that never finds a pair says so', async (t) => {
  const taken = await occupy(0);
  const port = portOf(taken);
  await t.rejects(listenApi(net.createServer(), port, HOST), { code: 'EADDRINUSE' });
  await t.rejects(
    listenApi(net.createServer(), 0, HOST, () => port),
    {
      code: 'TORUS_CONFIG_INVALID',
      message: /no free pair of ports/,
    },
  );
  await close(taken);
});
