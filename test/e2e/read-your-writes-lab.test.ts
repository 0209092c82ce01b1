/**
 * Read-your-writes on a follower, 3 lab hosts. A write through a follower is committed by the leader, and the
 * follower applies it only when the leader's next heartbeat or append tells it the commit index (up to 400 ms
 * later). A command that writes must not return in that window: the user's next command (or the next request)
 * goes to the same node and must see the write there. Each step below reads the follower's state right after the
 * write returned, within a few milliseconds, so a command that returned at the leader's commit fails it
 * (`artifacts add && artifacts broadcast` failed with TORUS_ARTIFACT_UNKNOWN that way).
 *  1. `artifacts add DIR && artifacts broadcast ID --to …` as one shell line, several times;
 *  2. the announce answer, then an immediate read of the artifact on that node, several times;
 *  3. `artifacts rm ID`, then an immediate read: this node is no longer a holder;
 *  4. `artifacts fetch ID` on the other follower, then an immediate read: it holds it complete;
 *  5. `members remove ID` of a stopped member, then an immediate read: the member is gone from the state.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { storeRoot } from '../../src/artifacts/layout.js';
import { E2eCluster, e2eUnavailableReason, MAIN, type E2eNode } from './lab-cluster.js';

t.setTimeout(360_000);

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const ROUNDS = 4;

interface ArtifactView {
  holders: { node: string; have: number; complete: boolean }[];
}

/** The artifact as `node` sees it right now: its holders, or none when it answers 404. */
async function holdersOn(node: E2eNode, id: string): Promise<ArtifactView['holders']> {
  const res = await node.fetch(`/v1/artifacts/${id}`);
  if (res.status === 404) return [];
  if (res.status !== 200)
    throw new Error(`GET /v1/artifacts/${id} on h${node.host}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as ArtifactView).holders;
}

/** A shell line inside a host's namespace, as a user's script on that machine (the CLI finds the node's token). */
function shell(c: E2eCluster, host: number, line: string): Promise<{ code: number; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, TORUS_DATA_DIR: c.nodes[host]!.dataDir };
  delete env.TORUS_API;
  delete env.TORUS_TOKEN;
  const child = c.lab.spawn(host, '/bin/sh', ['-c', line], { env });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout!.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stderr });
    }),
  );
}

function artifactDir(c: E2eCluster, name: string): string {
  const dir = join(c.tmpDir, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'weights.bin'), randomBytes(256 * 1024 + 17));
  return dir;
}

t.test(
  'a write through a follower is readable on it when the command returns',
  { timeout: 340_000, skip: why ? `skipped: ${why}` : false },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      // A long failure timeout: the stopped member of step 5 stays a member until the operator removes it.
      const c = await E2eCluster.start(t, lab, { failureTimeoutMs: 600_000 });
      const views = await c.converged(120_000, (vs) => vs.every((v) => Object.keys(v.state.state.nodes).length === 3));
      const followers = views.filter((v) => v.node.role === 'follower').map((v) => v.host);
      t.equal(followers.length, 2, `two followers: ${views.map((v) => `h${v.host} ${v.node.role}`).join(', ')}`);
      const [f, g] = followers as [number, number];
      const follower = c.nodes[f]!;
      const other = c.nodes[g]!;
      const ids = views.map((v) => v.node.id);

      // 1. A user's script: add, then broadcast what was added, through the same follower.
      for (let i = 0; i < ROUNDS; i++) {
        const dir = artifactDir(c, `script-${i}`);
        const to = ids.filter((id) => id !== follower.id).join(',');
        const cli = `"${process.execPath}" "${MAIN}" artifacts`;
        const run = await shell(c, f, `id=$(${cli} add "${dir}") && ${cli} broadcast "$id" --to ${to}`);
        t.equal(run.code, 0, `round ${i}: add && broadcast exits 0 (stderr: ${run.stderr.slice(-400)})`);
      }

      // 2. The announce answer, then at once a read on the same node.
      const store = new ArtifactStore(storeRoot(follower.dataDir));
      for (let i = 0; i < ROUNDS; i++) {
        const added = await store.add(artifactDir(c, `direct-${i}`));
        const res = await follower.fetch(`/v1/artifacts/${added.id}/announce`, { method: 'POST' });
        t.equal(res.status, 200, `round ${i}: announced (${res.status === 200 ? '' : await res.text()})`);
        const holders = await holdersOn(follower, added.id);
        t.ok(
          holders.some((h) => h.node === follower.id && h.complete),
          `round ${i}: right after the announce answered, the follower's state lists it as a complete holder (${JSON.stringify(holders)})`,
        );
      }

      // 3. rm through the CLI, then at once a read on the same node.
      const gone = await store.add(artifactDir(c, 'to-remove'));
      t.equal((await follower.fetch(`/v1/artifacts/${gone.id}/announce`, { method: 'POST' })).status, 200);
      const rm = await c.cli(f, ['artifacts', 'rm', gone.id]);
      t.equal(rm.code, 0, `rm exits 0: ${rm.stderr}`);
      t.notOk(
        (await holdersOn(follower, gone.id)).some((h) => h.node === follower.id),
        'right after rm returned, the follower is no longer listed as a holder',
      );

      // 4. fetch through the CLI on the other follower, then at once a read there.
      const wanted = await store.add(artifactDir(c, 'to-fetch'));
      t.equal((await follower.fetch(`/v1/artifacts/${wanted.id}/announce`, { method: 'POST' })).status, 200);
      // The other follower learns of the holding at its own pace: that is not the write under test.
      await c.until(
        'the other follower knows who holds it',
        async () => (await holdersOn(other, wanted.id)).length > 0,
        20_000,
      );
      const fetched = await c.cli(g, ['artifacts', 'fetch', wanted.id], 60_000);
      t.equal(fetched.code, 0, `fetch exits 0: ${fetched.stderr}`);
      t.ok(
        (await holdersOn(other, wanted.id)).some((h) => h.node === other.id && h.complete),
        'right after fetch returned, that node lists itself as a complete holder',
      );

      // 5. members remove of a stopped member, then at once a read on the same node.
      await other.stop('SIGTERM');
      await c.until(
        'the stopped member is disconnected',
        async () => {
          const res = await follower.fetch(`/v1/members/${encodeURIComponent(other.id)}`, { method: 'DELETE' });
          if (res.status === 409) return false; // still connected for a moment
          t.equal(res.status, 200, `removed: ${await res.clone().text()}`);
          return true;
        },
        30_000,
      );
      const state = (await (await follower.fetch('/v1/state')).json()) as { state: { nodes: Record<string, unknown> } };
      t.notOk(
        Object.hasOwn(state.state.nodes, other.id),
        'right after the removal answered, the member is gone from the state on the node that was asked',
      );
    });
  },
);
