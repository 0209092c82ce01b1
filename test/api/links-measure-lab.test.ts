/**
 * POST /v1/links/measure end to end: 2 real `node dist/main.js` nodes in lab namespaces (LAN 1gbit,
 * a 5gbit p2p link labelled thunderbolt). Once every link is measured (and confirmed), bad requests are refused
 * (400/404/405/415) and change nothing; a request for one link re-measures exactly that link (its measuredAt
 * moves, the other's does not); an empty request re-measures all of a node's links. Hostile probe clients on the
 * node's port (a stream that is never read, binary garbage) neither crash the node nor keep it from being measured.
 * The CLI's `torus measure --peer ID --wait` goes through the same route.
 */
import t from 'tap';
import net from 'node:net';
import { Lab, withLab } from '../../src/lab/index.js';
import { PROBE_STREAM_GRACE_MS } from '../../src/protocols/probe.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode, type NodeView } from '../e2e/lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
type Link = NodeView['topology']['links'][number];

async function post(
  node: E2eNode,
  body: string | undefined,
  contentType = 'application/json',
): Promise<{ status: number; json: any }> {
  const res = await node.fetch('/v1/links/measure', {
    method: 'POST',
    ...(body !== undefined ? { body, headers: { 'content-type': contentType } } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

t.test(
  'POST /v1/links/measure re-measures exactly what it is asked; bad input changes nothing',
  { timeout: 175_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(
      t,
      { hosts: 2, lanRate: '1gbit', links: [{ a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' }] },
      async (lab) => {
        const c = await E2eCluster.start(t, lab, {
          nodeArgs: (h) => ['--iface-type', 'lan0=ethernet', '--iface-type', `${lab.ifName(h, 1 - h)}=thunderbolt`],
        });
        const id = (h: number): string => c.nodes[h]!.id;
        const own = (v: NodeView, h: number): Link[] => v.topology.links.filter((l) => l.source === id(h));
        const stamp = (l: Link): string => `${l.sink}@${l.ip}`;
        const measured = (vs: NodeView[]): boolean =>
          vs.every(
            (v) =>
              v.topology.links.length === 4 &&
              v.topology.links.every((l) => typeof l.measuredAt === 'number' && (l.bandwidthBps ?? 0) > 0),
          );
        const first = await c.converged(90_000, measured);
        // Each new link is measured once more ~15 s later (confirmation): let that pass end before counting changes.
        const firstAt = new Map(first[0]!.topology.links.map((l) => [`${l.source}>${stamp(l)}`, l.measuredAt!]));
        const settled = await c.converged(
          60_000,
          (vs) =>
            measured(vs) && vs[0]!.topology.links.every((l) => l.measuredAt! > firstAt.get(`${l.source}>${stamp(l)}`)!),
        );
        const before = new Map(settled[0]!.topology.links.map((l) => [`${l.source}>${stamp(l)}`, l.measuredAt!]));
        t.pass('4 links up, measured and confirmed');

        const api0 = c.nodes[0]!;
        const tbIp = lab.linkIp(0, 1),
          lanIp = lab.hosts[1]!.lanIp;
        // Bad input: rejected with a clear 4xx and the error shape, nothing queued.
        const bad: [string | undefined, number, string, string?][] = [
          ['{"peer": 5}', 400, 'TORUS_API_VALIDATION'],
          ['{"ip": "not-an-ip"}', 400, 'TORUS_API_VALIDATION'],
          ['{"ip": "10.77.0.999"}', 400, 'TORUS_API_VALIDATION'],
          ['{"peer": "x", "extra": 1}', 400, 'TORUS_API_VALIDATION'],
          ['{"peer": ', 400, 'TORUS_API_VALIDATION'],
          ['[1,2]', 400, 'TORUS_API_VALIDATION'],
          ['peer=x', 415, 'TORUS_API_UNSUPPORTED_MEDIA_TYPE', 'application/x-www-form-urlencoded'],
          ['{"peer": "n-nobody"}', 404, 'TORUS_API_NOT_FOUND'],
          ['{"ip": "10.77.9.9"}', 404, 'TORUS_API_NOT_FOUND'],
          [`{"peer": "${id(0)}", "ip": "${tbIp}"}`, 404, 'TORUS_API_NOT_FOUND'], // its own id: no link to itself
        ];
        for (const [body, status, code, type] of bad) {
          const r = await post(api0, body, type);
          t.equal(r.status, status, `${body} → ${status}`);
          t.equal(r.json?.error?.code, code, `${body} → ${code}`);
        }
        const wrongMethod = await api0.fetch('/v1/links/measure');
        t.equal(wrongMethod.status, 405, 'GET → 405');
        t.equal(wrongMethod.headers.get('allow'), 'POST');
        await new Promise((r) => setTimeout(r, 4000));
        const unchanged = (await c.views())!;
        t.same(
          new Map(unchanged[0]!.topology.links.map((l) => [`${l.source}>${stamp(l)}`, l.measuredAt!])),
          before,
          'no link was re-measured by the refused requests',
        );

        // One link, by peer and address: exactly that one.
        const one = await post(api0, JSON.stringify({ peer: id(1), ip: tbIp }));
        t.equal(one.status, 202, 'one link → 202');
        t.match(
          one.json,
          {
            links: [
              { sink: id(1), ip: tbIp, type: 'thunderbolt', measuredAt: before.get(`${id(0)}>${id(1)}@${tbIp}`) },
            ],
          },
          'names the link and its previous measuredAt',
        );
        t.equal(one.json.links.length, 1);
        const after = await c.until(
          'the thunderbolt link re-measured',
          async () => {
            const vs = await c.views();
            const l = vs && own(vs[0]!, 0).find((x) => x.ip === tbIp);
            return l && l.measuredAt! > before.get(`${id(0)}>${id(1)}@${tbIp}`)! && vs;
          },
          30_000,
        );
        const lanAfter = own(after[0]!, 0).find((x) => x.ip === lanIp)!;
        t.equal(
          lanAfter.measuredAt,
          before.get(`${id(0)}>${id(1)}@${lanIp}`),
          'the LAN link of the same pair was not re-measured',
        );
        const tbAfter = own(after[0]!, 0).find((x) => x.ip === tbIp)!;
        t.comment(
          `re-measured thunderbolt ${(tbAfter.bandwidthBps! / 1e9).toFixed(2)} Gbit/s (LAN ${(lanAfter.bandwidthBps! / 1e9).toFixed(2)} Gbit/s)`,
        );

        // Hostile probe clients on h1's port: a stream never read, then binary garbage. h1 stays up and measurable.
        const u = new URL(c.nodes[1]!.api);
        const stalled = net.connect(Number(u.port), u.hostname, () =>
          stalled.write('GET /v1/probe/stream?ms=300 HTTP/1.1\r\nhost: x\r\n\r\n'),
        );
        stalled.pause();
        stalled.on('error', () => undefined);
        t.teardown(() => stalled.destroy());
        const garbage = net.connect(Number(u.port), u.hostname, () =>
          garbage.end(Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 131) % 256))),
        );
        garbage.on('error', () => undefined);
        t.teardown(() => garbage.destroy());
        await new Promise((r) => setTimeout(r, 200));
        t.equal((await c.nodes[1]!.fetch(`/v1/node`)).status, 200, 'h1 answers while a probe client stalls');

        // All of h0's links (empty body): both re-measured, although h1's probe was held by the stalled client.
        const since = Date.now();
        const all = await post(api0, undefined);
        t.equal(all.status, 202, 'empty body → 202');
        t.same(
          all.json.links.map((l: { ip: string }) => l.ip).sort(),
          [lanIp, tbIp].sort(),
          "names both of h0's links",
        );
        const base = new Map(own(after[0]!, 0).map((l) => [l.ip!, l.measuredAt!]));
        await c.until(
          "both of h0's links re-measured",
          async () => {
            const vs = await c.views();
            return vs && own(vs[0]!, 0).every((l) => l.measuredAt! > base.get(l.ip!)!) && vs;
          },
          40_000,
        );
        t.pass(
          `both re-measured ${Date.now() - since} ms after the request (a stalled probe client is cut after 300 + ${PROBE_STREAM_GRACE_MS} ms)`,
        );
        t.equal((await c.nodes[1]!.fetch(`/v1/node`)).status, 200, 'h1 still healthy');
        t.ok(c.nodes[1]!.alive, 'h1 process alive');

        // The CLI (`torus measure`, inside h1's namespace, default API): h1's links to h0, waited for.
        const cli = await c.cli(1, ['measure', '--peer', id(0), '--wait', '--json'], 70_000);
        t.equal(cli.code, 0, `torus measure --peer --wait exits 0 ${cli.stderr}`);
        const printed = JSON.parse(cli.stdout) as { links: Link[]; pending: number };
        t.same(
          printed.links.map((l) => l.ip).sort(),
          [lab.hosts[0]!.lanIp, lab.linkIp(1, 0)].sort(),
          "prints both of h1's links to h0, re-measured",
        );
        t.equal(printed.pending, 0);
        const badCli = await c.cli(1, ['measure', '--ip', 'nope']);
        t.equal(badCli.code, 1, 'a bad address exits 1');
        t.match(badCli.stderr, /TORUS_API_VALIDATION/, "with the API's error");
      },
    );
  },
);
