/**
 * The real node (`node dist/main.js`, all actors: cluster + topology keeper + profiler + ...) in the lab:
 * 4 hosts converge to one digest with every node and the links between them; kill -9 the leader; restart a node.
 * Needs `npm run build` (the test skips when dist/main.js is missing, and fails there where lab tests must run) and root for the lab.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { Lab, withLab } from '../../../src/lab/index.js';
import { readApiTokenIn } from '../../../src/protocols/data-dir-files.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

/** GET inside a namespace with the node's API token: curl when installed (light), else Node's fetch (a whole Node start per request). */
const FETCH =
  'fetch(process.argv[1], { headers: { authorization: process.argv[2] }, signal: AbortSignal.timeout(1500) }).then((r) => r.text()).then((t) => process.stdout.write(t), () => process.exit(1))';
const getArgv = (url: string, auth: string): string[] =>
  existsSync('/usr/bin/curl')
    ? ['curl', '-s', '-m', '2', '-H', `Authorization: ${auth}`, url]
    : [process.execPath, '-e', FETCH, url, auth];

const main = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
const PORT = 7000;

interface View {
  id: string;
  role: string;
  leaderId?: string;
  incarnation: number;
  digest: string;
  nodes: string[];
  links: { source: string; sink: string }[];
}

/** `view(lab, h, dataDir)`: the node's token is read from `<dataDir>/api-token`, as the CLI on its machine finds it. */
async function view(lab: Lab, h: number, dataDir: string): Promise<View | null> {
  try {
    const auth = `Bearer ${readApiTokenIn(dataDir) ?? ''}`;
    const get = async (path: string) =>
      JSON.parse(
        (await lab.exec(h, getArgv(`http://127.0.0.1:${PORT}${path}`, auth), { timeoutMs: 5000 })).stdout,
      ) as Record<string, unknown>;
    const node = await get('/v1/node');
    const st = (await get('/v1/state')) as {
      digest: string;
      state: { nodes: Record<string, unknown>; links: { source: string; sink: string }[] };
    };
    return {
      id: node.id as string,
      role: node.role as string,
      leaderId: node.leaderId as string | undefined,
      incarnation: node.incarnation as number,
      digest: st.digest,
      nodes: Object.keys(st.state.nodes).sort(),
      links: st.state.links,
    };
  } catch {
    return null;
  }
}

async function until<T>(what: string, fn: () => Promise<T | null | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

// Several multi-process labs on a shared 2-core machine: more than the default per-file timeout.
t.setTimeout(300_000);

t.test(
  'real nodes in the lab: converge with links, leader kill -9, restart',
  {
    timeout: 240_000,
    skip: skipOrFail(
      Lab.unavailableReason() ?? (existsSync(main) ? undefined : 'dist/main.js missing (run `npm run build` first)'),
    ),
  },
  async (t) => {
    await withLab(t, { hosts: 4 }, async (lab) => {
      const dirs = [0, 1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'torus-real-')));
      t.teardown(() => {
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      });
      const procs = new Map<number, ChildProcess>();
      const secret = `torus-${randomBytes(32).toString('base64url')}`; // one join token for the lab's cluster
      const start = (h: number) =>
        procs.set(
          h,
          lab.spawn(
            h,
            process.execPath,
            [
              main,
              'start',
              '--port',
              String(PORT),
              '--data-dir',
              dirs[h]!,
              '--cluster',
              'lab',
              '--name',
              `h${h}`,
              '--failure-timeout-ms',
              '3000',
            ],
            { env: { ...process.env, TORUS_LOG_LEVEL: 'error', TORUS_SECRET: secret } },
          ),
        );
      for (const h of [3, 1, 0, 2]) start(h);
      const all = async (hosts: number[]) => {
        const vs = await Promise.all(hosts.map((h) => view(lab, h, dirs[h]!)));
        return vs.every((v) => v !== null) ? (vs as View[]) : null;
      };
      const agreed = (vs: View[] | null, n: number) =>
        !!vs &&
        vs.every((v) => v.nodes.length === n && v.links.length === n * (n - 1) && v.leaderId) &&
        new Set(vs.map((v) => v.digest)).size === 1 &&
        vs.filter((v) => v.role === 'leader').length === 1;
      const formed = await until(
        '4 real nodes agree, every pair linked',
        async () => {
          const vs = await all([0, 1, 2, 3]);
          return agreed(vs, 4) && vs;
        },
        90_000,
      );
      t.pass('4 nodes, 12 directed links, one digest, one leader');
      const ids = formed.map((v) => v.id);
      const leaderHost = formed.findIndex((v) => v.role === 'leader');
      const leaderId = formed[leaderHost]!.id;

      procs.get(leaderHost)!.kill('SIGKILL');
      const rest = [0, 1, 2, 3].filter((h) => h !== leaderHost);
      const after = await until(
        'new leader, old one gone with its links',
        async () => {
          const vs = await all(rest);
          return agreed(vs, 3) && vs!.every((v) => v.leaderId !== leaderId && !v.nodes.includes(leaderId)) && vs;
        },
        30_000,
      );
      t.ok(
        after.every((v) => !v.links.some((l) => l.source === leaderId || l.sink === leaderId)),
        'links of the dead leader removed',
      );

      start(leaderHost);
      const rejoined = (vs: View[] | null) =>
        !!vs &&
        vs.every((v) => v.nodes.length === 4 && v.leaderId) &&
        new Set(vs.map((v) => v.digest)).size === 1 &&
        vs[leaderHost]!.incarnation === 2;
      const back = await until(
        'restarted node rejoined',
        async () => {
          const vs = await all([0, 1, 2, 3]);
          return rejoined(vs) && vs;
        },
        60_000,
      );
      // Its links were dropped with the old incarnation; the profilers measure them again.
      const relinked = await until(
        'links of the restarted node measured again',
        async () => {
          const vs = await all([0, 1, 2, 3]);
          return agreed(vs, 4) && vs;
        },
        90_000,
      ).catch((err: Error) => err);
      t.notOk(relinked instanceof Error, 'links to and from the restarted node re-measured');
      t.equal(back[leaderHost]!.id, leaderId, 'same node id after restart');
      t.equal(back[leaderHost]!.incarnation, 2, 'next incarnation');
      t.same(back.map((v) => v.id).sort(), [...ids].sort());
    });
  },
);
