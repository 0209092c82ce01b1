/**
 * The cluster-writes benchmark's clients against a real standalone cluster node (dist/actors/cluster/standalone.js,
 * one node: it leads itself and commits alone): only acknowledged writes count, a refusal fails the run, and the
 * check finds an acknowledged write that a node's log lacks. Needs `npm run build`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { missingWrites, runClients } from '../../../benchmarks/cluster-writes/clients.js';
import { Proc } from '../../../benchmarks/cluster-writes/proc.js';

const entry = fileURLToPath(new URL('../../../dist/actors/cluster/standalone.js', import.meta.url));
if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);

async function startNode(t: Test): Promise<Proc> {
  const child = spawn(
    process.execPath,
    [entry, JSON.stringify({ nodeId: 'c0', clusterName: 'writes-test', mdns: false, recordApplied: true })],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, TORUS_LOG_LEVEL: 'error' } },
  );
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const proc = new Proc('c0', child);
  const t0 = Date.now();
  while (proc.status?.role !== 'leader') {
    if (Date.now() - t0 > 20_000) throw new Error(`no leader after 20 s: ${JSON.stringify(proc.status)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return proc;
}

let seq = 0;
const good = () => ({ type: 'InstanceDeleted', instanceId: `t-${seq++}`, reason: 'bench' });
const refused = () => ({ type: 'InstanceDeleted', instanceId: `t-${seq++}` }); // no reason: the node refuses it

t.test('acknowledged writes are counted, and each is in the log at its index', async (t) => {
  const node = await startNode(t);
  const acked = await runClients(8, 60, () => {
    const event = good();
    return { event, answer: node.propose(event) };
  });
  t.equal(acked.length, 60);
  t.equal(new Set(acked.map((w) => w.index)).size, 60, 'sixty distinct log indices');
  const log = await node.applied();
  t.same(missingWrites(acked, [{ name: 'c0', log }]), []);
  const lacking = { entries: log.entries.filter((e) => e.index !== acked[7]!.index), installed: [] };
  t.same(missingWrites(acked, [{ name: 'c0', log: lacking }]), [
    `c0: acknowledged write at index ${acked[7]!.index} is not in its log`,
  ]);
  const swapped = {
    entries: log.entries.map((e) => (e.index === acked[3]!.index ? { ...e, event: good() } : e)),
    installed: [],
  };
  t.match(missingWrites(acked, [{ name: 'c0', log: swapped }]), [new RegExp(`c0: index ${acked[3]!.index} holds`)]);
  const snapshot = { entries: log.entries, installed: [acked[0]!.index] };
  t.match(missingWrites(acked, [{ name: 'c0', log: snapshot }]), [/came in a snapshot .* not checked/]);
});

t.test('a refused write fails the run; it is never counted', async (t) => {
  const node = await startNode(t);
  let proposals = 0;
  await t.rejects(
    runClients(8, 60, () => {
      const event = ++proposals === 20 ? refused() : good();
      return { event, answer: node.propose(event) };
    }),
    /a write was refused \(\d+ of \d+ sent were acknowledged\): event indexed\.event\.reason: missing \(TORUS_PROTOCOL_INVALID\)/,
  );
  t.ok(proposals < 60, `no new writes after the refusal (${proposals} sent)`);
});
