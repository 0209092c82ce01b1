/**
 * A rank's log, from whichever node is asked (`GET /v1/instances/:id/logs?rank=N&follow=1`). The node
 * that holds the rank's runner reads its log files in order across rotations (stream-reader.ts; and with `follow`, what is appended until the rank's command
 * has ended for good: `rankMayWrite`); any other node proxies to the holder's API at an address this node reached it by (a measured
 * link), with a peer proof of its own (protocols/peer-http-proof.ts: bound to this one request, single use), never
 * the API token: that token is for people and their programs, and a node's requests cross the LAN. Bytes pass
 * through unchanged.
 */
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { TorusError } from '../../../protocols/errors.js';
import type { ClusterState } from '../../topology-keeper/state.js';
import { restartable } from '../../topology-keeper/restart-rule.js';
import { getStream } from '../../../http/http-stream.js';
import type { PeerSigner } from '../../../protocols/peer-http-proof.js';
import { runnerDir } from '../shared/run-dir.js';
import { listSegments, streamEnd, type LogStream } from '../shared/log-segments.js';
import { StreamReader } from './stream-reader.js';

export type { LogStream } from '../shared/log-segments.js';

export interface LogRequest {
  readonly instanceId: string;
  readonly rank: number;
  readonly stream: LogStream;
  readonly follow: boolean;
  /** Start this many bytes before the end (`tail -c`); absent: from the beginning. */
  readonly tail?: number | undefined;
}

export interface LogDeps {
  readonly nodeId: string;
  readonly dataDir: string;
  readonly state: () => Promise<ClusterState>;
  /** Proves this node to the holder's API (peer proof headers; none in an open cluster). */
  readonly signPeer: PeerSigner;
  /** How long a holder's 404 is retried (it may not have applied the instance yet); default 10 s. */
  readonly holderLagMs?: number;
  /** How often a followed log is checked for new bytes. */
  readonly pollMs?: number;
}

/**
 * Whether the rank on `nodeId` may still write to its log: the instance is live (or a failed job about to be
 * restarted), and this rank's command has not ended for good. A rank whose command exited 0 while the others run
 * has ended, unless the job may restart (on-failure with restarts left: a later failure reruns every rank). A job
 * that failed for good (another rank's failure) ends this rank once its runner says so: its command's exit, or the
 * runner stopped. Each of those is published only after the output before it is in the log files (runner-process.ts).
 */
export function rankMayWrite(state: ClusterState, id: string, nodeId: string): boolean {
  const record = Object.hasOwn(state.instances, id) ? state.instances[id]! : undefined;
  if (!record || record.status === 'completed') return false;
  const again = restartable(record);
  if (again) return true;
  const runner = Object.hasOwn(record.runners, nodeId) ? record.runners[nodeId] : undefined;
  const commandEnded = record.workload.kind === 'exec' && runner?.exitCode !== undefined;
  if (record.status === 'failed')
    return runner !== undefined && !commandEnded && runner.signal === undefined && !STOPPED.has(runner.status);
  return !(commandEnded && runner?.status === 'Ready');
}

/** Runner statuses after which a runner process writes nothing more. */
const STOPPED: ReadonlySet<string> = new Set(['Shutdown', 'Failed']);

/** Which node holds `rank` of the instance (404 / 400 as TorusErrors). */
export function holderOf(state: ClusterState, req: LogRequest): string {
  const record = Object.hasOwn(state.instances, req.instanceId) ? state.instances[req.instanceId] : undefined;
  if (!record)
    throw new TorusError('TORUS_INSTANCE_UNKNOWN', `no instance ${req.instanceId}`, { instanceId: req.instanceId });
  const node = record.plan.nodes[req.rank];
  // A rank the parameters allow that this instance does not have: a missing resource (404), as an unknown
  // instance is, not a malformed request (the document cannot know an instance's world size).
  if (node === undefined)
    throw new TorusError(
      'TORUS_API_NOT_FOUND',
      `rank ${req.rank} is not in instance ${req.instanceId} (world size ${record.plan.nodes.length})`,
      { instanceId: req.instanceId, rank: req.rank, worldSize: record.plan.nodes.length },
    );
  return node;
}

/** The rank's log as chunks: local file, or the holder's answer. */
export async function openRunnerLog(
  deps: LogDeps,
  req: LogRequest,
  signal: AbortSignal,
): Promise<AsyncIterable<Uint8Array>> {
  const state = await deps.state();
  const holder = holderOf(state, req);
  if (holder === deps.nodeId) return localLog(deps, req, signal);
  return proxiedLog(deps, state, holder, req, signal);
}

async function* localLog(deps: LogDeps, req: LogRequest, signal: AbortSignal): AsyncIterable<Uint8Array> {
  const dir = runnerDir(deps.dataDir, req.instanceId, deps.nodeId);
  const reader = new StreamReader(
    dir,
    req.stream,
    req.tail === undefined ? 0 : Math.max(0, (await streamEnd(await listSegments(dir, req.stream))) - req.tail),
  );
  // The rank was seen unable to write: the read after that, which finds the end of its log, is the last.
  let ended = false;
  try {
    for (;;) {
      const chunk = await reader.next();
      if (chunk.length > 0) {
        yield chunk;
        continue;
      }
      if (!req.follow || signal.aborted || ended) return;
      // The command's end is published only once its output is in the log files (runner-process.ts), so one more
      // read after seeing it has everything; that read may come at once.
      if (!rankMayWrite(await deps.state(), req.instanceId, deps.nodeId)) {
        ended = true;
        continue;
      }
      try {
        await sleep(deps.pollMs ?? 200, undefined, { signal });
      } catch {
        return;
      }
    }
  } finally {
    await reader.close();
  }
}

/** The holder's API address: one this node reached it at (a link from here), else any non-loopback address it gave. */
function apiUrlOf(state: ClusterState, self: string, holder: string): string {
  const node = state.nodes[holder];
  if (!node) throw new TorusError('TORUS_NODE_UNKNOWN', `node ${holder} (holding the log) is not in the cluster`);
  const link = state.links.find((l) => l.source === self && l.sink === holder);
  const ip = link?.ip ?? node.apiAddresses.find((a) => !a.ip.startsWith('127.') && a.ip !== '::1')?.ip;
  if (!ip) throw new TorusError('TORUS_API_UNREACHABLE', `no address of node ${holder} is known here`);
  return ip.includes(':') ? `http://[${ip}]:${node.apiPort}` : `http://${ip}:${node.apiPort}`;
}

async function* proxiedLog(
  deps: LogDeps,
  state: ClusterState,
  holder: string,
  req: LogRequest,
  signal: AbortSignal,
): AsyncIterable<Uint8Array> {
  const query = `rank=${req.rank}&stream=${req.stream}${req.follow ? '&follow=1' : ''}${req.tail !== undefined ? `&tail=${req.tail}` : ''}`;
  const path = `/v1/instances/${encodeURIComponent(req.instanceId)}/logs?${query}`;
  const url = `${apiUrlOf(state, deps.nodeId, holder)}${path}`;
  let res: IncomingMessage;
  // The holder may not have applied the instance yet (replication lags by a few ms to seconds): its 404 is retried
  // for a bounded time, since this node's state already says the instance exists and where the rank is.
  const deadline = Date.now() + (deps.holderLagMs ?? 10_000);
  for (;;) {
    try {
      res = await getStream(url, deps.signPeer('GET', path), signal); // a fresh proof per attempt: each is single use
    } catch (error) {
      throw new TorusError(
        'TORUS_API_UNREACHABLE',
        `cannot fetch the log from node ${holder}: ${(error as Error).message}`,
        { node: holder },
      );
    }
    if (res.statusCode !== 404 || Date.now() >= deadline || signal.aborted) break;
    res.resume();
    try {
      await sleep(deps.pollMs ?? 200, undefined, { signal });
    } catch {
      break;
    }
  }
  if (res.statusCode !== 200) {
    res.resume();
    throw new TorusError('TORUS_API_UNREACHABLE', `node ${holder} answered HTTP ${res.statusCode} for the log`, {
      node: holder,
      status: res.statusCode,
    });
  }
  try {
    for await (const chunk of res) yield chunk as Buffer;
  } catch (error) {
    if (!signal.aborted) throw error; // the holder went away mid-stream: the answer ends with an error, not silently
  }
}
