/**
 * In-process artifact nodes for tests: real ArtifactServices, each serving its peer routes on its own loopback
 * HTTP server, sharing one replicated state that their proposals are applied to in order (the real apply).
 */
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { applyEvent } from '../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../src/actors/topology-keeper/state.js';
import type { ClusterEvent } from '../../src/protocols/events.js';
import { ArtifactService } from '../../src/artifacts/service.js';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { createLogger } from '../../src/runtime/log.js';
import { sendError } from '../../src/http/http-io.js';
import { TorusError } from '../../src/protocols/errors.js';

export const KEY = 'ab'.repeat(32);

export class SharedState {
  state: ClusterState = emptyState;
  apply(event: ClusterEvent): void {
    this.state = applyEvent(this.state, { index: this.state.lastIndex + 1, term: 1, event, at: Date.now() });
  }
}

export interface TestNode {
  id: string;
  dir: string;
  service: ArtifactService;
  server: Server;
  url: string;
}

export async function startNodes(
  t: { teardown(fn: () => unknown): void },
  count: number,
  opts: { stallMs?: number } = {},
): Promise<{ shared: SharedState; nodes: TestNode[] }> {
  const shared = new SharedState();
  const nodes: TestNode[] = [];
  const root = mkdtempSync(join(tmpdir(), 'torus-art-nodes-'));
  t.teardown(async () => {
    for (const n of nodes) {
      await n.service.close();
      n.server.closeAllConnections();
      n.server.close();
    }
    rmSync(root, { recursive: true, force: true });
  });
  for (let i = 0; i < count; i++) {
    const id = `n${i}`;
    const dir = join(root, id);
    let service: ArtifactService | undefined;
    const server = createServer((req, res) => {
      if (!service?.peerHandler(req, res)) sendError(res, new TorusError('TORUS_API_NOT_FOUND', 'not a peer route'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    service = new ArtifactService({
      nodeId: id,
      nodeName: id,
      dataDir: dir,
      dataKey: KEY,
      log: createLogger({ component: `artifacts-${id}` }),
      syncIntervalMs: 200,
      ...(opts.stallMs ? { stallMs: opts.stallMs } : {}),
      // Proposals apply at once here: a condition the state does not meet after them is not coming.
      cluster: {
        state: async () => shared.state,
        propose: async (e) => shared.apply(e),
        until: async (done, _timeoutMs, onTimeout) => {
          if (!done(shared.state)) throw onTimeout();
        },
      },
    });
    shared.apply({
      type: 'NodeJoined',
      nodeId: id,
      name: id,
      incarnation: 1,
      apiPort: port,
      apiAddresses: [{ ip: '127.0.0.1', port }],
      version: 'test',
    });
    nodes.push({ id, dir, service, server, url: `http://127.0.0.1:${port}` });
  }
  for (const n of nodes) n.service.start();
  return { shared, nodes };
}

export async function until<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 30_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `data` as DIR/src.bin, added to a source store at DIR/a in `chunkSize` chunks, with its manifest and an empty
 * store root DIR/b for a writer to receive it into.
 */
export async function addedSource(dir: string, data: Buffer, chunkSize: number) {
  writeFileSync(join(dir, 'src.bin'), data);
  const source = new ArtifactStore(join(dir, 'a'));
  const added = await source.add(join(dir, 'src.bin'), { chunkSize });
  const { manifest, bytes } = source.manifest(added.id)!;
  const root = join(dir, 'b');
  mkdirSync(root);
  return { source, added, manifest, bytes, root };
}
