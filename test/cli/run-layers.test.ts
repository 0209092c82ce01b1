/**
 * `torus run --layers N`: the job's workload asks the planner to split N layers over the ranks (each rank's
 * TORUS_LAYER_START/END), so a pipeline job gets its share of a model's layers; without it, one layer per rank.
 * Fewer layers than --min-nodes is a usage error, and nothing is sent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { runRunCommand } from '../../src/cli/run.js';

function io() {
  const err: string[] = [];
  return {
    io: { stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) } },
    err: () => err.join(''),
  };
}

/** An API that records each POST /v1/instances body and refuses it (so `run` ends there with exit 1). */
async function recordingApi(t: Test): Promise<{ api: string; bodies: any[] }> {
  const bodies: any[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/instances') bodies.push(JSON.parse(raw));
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'TORUS_PLACEMENT_REFUSED', message: 'refused by the test' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

t.test('--layers N: the workload splits N layers; default one per rank; fewer than the ranks refused', async (t) => {
  const { api, bodies } = await recordingApi(t);
  const base = ['--api', api, '--token', 'x', '--min-nodes', '3'];
  t.equal(await runRunCommand([...base, '--layers', '6', '--', 'python3', 'job.py'], io().io), 1, 'refused by the API');
  t.equal(await runRunCommand([...base, '--', 'python3', 'job.py'], io().io), 1);
  t.same(
    bodies.map((b) => [b.minNodes, b.workload.layers]),
    [
      [3, 6],
      [3, 3],
    ],
    'layers 6 when asked, else one per rank',
  );
  for (const bad of ['2', '1.5', 'six']) {
    const c = io();
    t.equal(await runRunCommand([...base, '--layers', bad, '--', 'python3', 'job.py'], c.io), 2, `--layers ${bad}`);
    t.match(c.err(), /^--layers: expected a whole number ≥ --min-nodes \(3\)/, c.err().split('\n')[0] ?? '');
  }
  t.equal(bodies.length, 2, 'nothing sent for a bad --layers');
});
