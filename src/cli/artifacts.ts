/**
 * `torus artifacts add|ls|rm|get|fetch|broadcast`: the content-addressed store (docs/artifacts.md).
 *
 * `add` and `get` read and write this machine's store directly (`--data-dir`, env TORUS_DATA_DIR, else ~/.torus:
 * the node's data dir), so the user's files are read with the user's permissions and the node's API never reads
 * arbitrary paths; `add` then tells the local node (POST /v1/artifacts/ID/announce) so the cluster knows at once
 * (a node that is not running announces it at its next start). Everything else goes through the node's API.
 * A command that writes returns once the node it talks to has applied the write (the announce, remove and fetch
 * answers wait for it), so `add && broadcast` works; when that does not come in time it says so and exits 1.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TorusError, asTorusError } from '../protocols/errors.js';
import { modelLine, modelSummary } from '../artifacts/model/model-view.js';
import { artifactId, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE } from '../artifacts/ids.js';
import { storeRoot } from '../artifacts/layout.js';
import { ProgressPrinter, type ProgressSample } from './progress.js';
import type { TransferStatus } from '../artifacts/transfer-status.js';
import { boundFromState, boundView, type BoundView } from '../artifacts/state-bound.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import { ArtifactStore } from '../artifacts/store.js';
import { UsageError, parseCli, printJson, processIo, runCli, type ApiClient, type CliIo } from './api-client.js';
import { formatBytes, parseBytes, renderTable } from './table.js';

export const ARTIFACTS_USAGE = `usage: torus artifacts COMMAND [--api URL] [--data-dir DIR] [--json]
  add PATH [--name NAME] [--chunk-size BYTES]
                               add a file or directory to this node's store (4 MiB chunks, SHA-256); prints its id
  ls                           every artifact in the cluster and who holds it (complete or partial)
  rm ID                        remove an artifact from this node's store
  fetch ID                     fetch it into this node from every holder (progress on stderr)
  get ID --to DIR              fetch it if needed, then write its files into DIR (verified, bit-identical)
  broadcast ID (--to N1,N2,… | --instance INSTANCE)
                               send it to those nodes as a pipeline chain, in that order (an instance: its ring order)
`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  name: { type: 'string' },
  'chunk-size': { type: 'string' },
  to: { type: 'string' },
  instance: { type: 'string' },
} as const;

interface ArtifactView {
  id: string;
  name: string;
  bytes: number;
  chunks: number;
  holders: {
    node: string;
    have: number;
    complete: boolean;
    stage?: { fromLayer: number; toLayer: number; have: number; chunks: number };
  }[];
}

/** A holder in `ls`: complete, a model's stage (`layers 2-4`, end exclusive, with its progress until held), or chunks. */
export function holderText(h: ArtifactView['holders'][number], chunks: number): string {
  if (h.complete) return h.node;
  const s = h.stage;
  if (!s) return `${h.node} (${h.have}/${chunks})`;
  const layers = `layers ${s.fromLayer}-${s.toLayer}`;
  return s.have === s.chunks
    ? `${h.node} (${layers})`
    : `${h.node} (${layers}: ${((100 * s.have) / s.chunks).toFixed(1)}%)`;
}

export function cliDataDir(flag: unknown): string {
  return typeof flag === 'string' ? flag : (process.env.TORUS_DATA_DIR ?? join(homedir(), '.torus'));
}

export async function runArtifactsCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, ARTIFACTS_USAGE, args, args.includes('--json'), async () => {
    const [sub, ...rest] = args;
    const { values, positionals, client } = parseCli(rest, OPTIONS, 1);
    const json = !!values.json;
    const dataDir = cliDataDir(values['data-dir']);
    const arg = positionals[0];
    switch (sub) {
      case 'add': {
        if (!arg) throw new UsageError('missing PATH');
        const store = new ArtifactStore(storeRoot(dataDir));
        const chunkSize = typeof values['chunk-size'] === 'string' ? parseBytes(values['chunk-size']) : undefined;
        if (
          chunkSize !== undefined &&
          (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE)
        )
          throw new UsageError(`--chunk-size: expected ${MIN_CHUNK_SIZE}..${MAX_CHUNK_SIZE} bytes`);
        if (typeof values['chunk-size'] === 'string' && chunkSize === undefined)
          throw new UsageError('--chunk-size: expected a size such as 1MiB');
        const added = await store.add(arg, {
          ...(typeof values.name === 'string' ? { name: values.name } : {}),
          ...(chunkSize !== undefined ? { chunkSize } : {}),
        });
        // Answered once the node's own state shows the holding: the next command (broadcast, run) sees it there.
        let announced = true;
        let pending: TorusError | undefined;
        try {
          await client.request('POST', `/v1/artifacts/${added.id}/announce`);
        } catch (error) {
          announced = false;
          const e = asTorusError(error);
          // No node running here: nothing to tell now, and it announces the store when it starts.
          if (e.code === 'TORUS_API_UNREACHABLE')
            io.stderr.write(`note: ${e.message}; the node announces the artifact when it next starts\n`);
          else pending = e;
        }
        const { model, ...plain } = added;
        if (json) printJson(io, { ...plain, ...(model ? { model: modelSummary(model) } : {}), announced });
        else io.stdout.write(`${added.id}\n`);
        if (model) io.stderr.write(`${modelLine(model)}\n`);
        if (added.modelNote) io.stderr.write(`note: not recorded as a model: ${added.modelNote}\n`);
        io.stderr.write(
          `${added.existed ? 'already stored' : 'added'} ${added.name}: ${added.files} file(s), ${formatBytes(added.bytes)}, ${added.chunks} chunk(s) (${
            Object.entries(added.methods)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ') || 'no files'
          })\n`,
        );
        if (pending) {
          io.stderr.write(
            `error: stored on this machine, but the cluster does not know it yet: ${pending.message} (${pending.code})\n`,
          );
          return 1;
        }
        return 0;
      }
      case 'ls': {
        const body = await client.get<{
          artifacts: ArtifactView[];
          damaged?: { id: string; name?: string; reason: string }[];
        }>('/v1/artifacts');
        if (json) {
          printJson(io, body);
          return 0;
        }
        io.stdout.write(
          renderTable(
            ['ID', 'NAME', 'SIZE', 'HOLDERS'],
            body.artifacts.map((a) => [
              a.id.slice(0, 16),
              a.name,
              formatBytes(a.bytes),
              a.holders.map((h) => holderText(h, a.chunks)).join(', '),
            ]),
          ),
        );
        // What this node's store holds but cannot serve: said, not left out.
        if (body.damaged?.length)
          io.stdout.write(
            `\nDAMAGED on this node (${body.damaged.length})\n${renderTable(
              ['ID', 'NAME', 'REASON'],
              body.damaged.map((d) => [d.id.slice(0, 16), d.name ?? '', d.reason]),
            )}`,
          );
        return 0;
      }
      case 'rm': {
        const id = artifactId(arg, 'flag', 'ID');
        const result = await client.request('DELETE', `/v1/artifacts/${id}`);
        if (json) printJson(io, result);
        else io.stdout.write(`removed ${id} from this node\n`);
        return 0;
      }
      case 'fetch':
      case 'get': {
        const id = artifactId(arg, 'flag', 'ID');
        if (sub === 'get' && typeof values.to !== 'string') throw new UsageError('get needs --to DIR');
        const store = new ArtifactStore(storeRoot(dataDir));
        if (!store.info(id)?.complete) await fetchWithProgress(client, io, id, json);
        if (sub === 'fetch') return 0;
        const written = await store.exportTo(id, values.to as string);
        if (json) printJson(io, { id, to: values.to, ...written });
        else
          io.stdout.write(
            `wrote ${written.files} file(s), ${formatBytes(written.bytes)} to ${values.to as string} (verified)\n`,
          );
        return 0;
      }
      case 'broadcast': {
        const id = artifactId(arg, 'flag', 'ID');
        const target =
          typeof values.to === 'string'
            ? { nodes: values.to.split(',').filter(Boolean) }
            : typeof values.instance === 'string'
              ? { instance: values.instance }
              : undefined;
        if (!target) throw new UsageError('broadcast needs --to N1,N2,… or --instance INSTANCE');
        const answer = await client.request<{ chain: string[]; refused: { node: string; message: string }[] }>(
          'POST',
          `/v1/artifacts/${id}/broadcast`,
          target,
        );
        for (const r of answer.refused) io.stderr.write(`refused by ${r.node}: ${r.message}\n`);
        if (!json) io.stderr.write(`chain: ${answer.chain.join(' → ')}\n`);
        const ok = await watchChain(client, io, id, answer.chain.slice(1));
        if (json) printJson(io, { ...answer, complete: ok });
        return ok && answer.refused.length === 0 ? 0 : 1;
      }
      default:
        throw new UsageError(sub ? `unknown artifacts command ${sub}` : 'missing artifacts command');
    }
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What sets a bound, for the progress line: `in: h2`, `out: h0`, `out: the holders`. */
const boundBy = (b: BoundView, name: (node: string) => string = (n) => n): string =>
  `${b.side}: ${b.node === 'holders' ? 'the holders' : name(b.node)}`;

async function fetchWithProgress(client: ApiClient, io: CliIo, id: string, json: boolean): Promise<void> {
  let status = await client.request<TransferStatus>('POST', `/v1/artifacts/${id}/fetch`);
  const printer = new ProgressPrinter(io.stderr as CliIo['stderr'] & { isTTY?: boolean });
  const sample = (s: TransferStatus): ProgressSample => ({
    label: s.name,
    doneBytes: s.haveBytes,
    totalBytes: s.bytes,
    rateBps: s.rateBps,
    ...(s.bound ? { bound: { seconds: s.bound.seconds, by: boundBy(s.bound) } } : {}),
    elapsedSeconds: ((s.endedAt ?? Date.now()) - s.startedAt) / 1000,
  });
  while (status.state === 'running' || status.state === 'preparing') {
    if (!json) printer.update(sample(status));
    await sleep(500);
    const all = await client.get<{ transfers: TransferStatus[] }>('/v1/artifacts/transfers');
    status = all.transfers.find((t) => t.id === id) ?? status;
  }
  if (!json) printer.done(sample(status));
  if (status.state !== 'complete')
    throw new TorusError(
      (status.error?.code ?? 'TORUS_ARTIFACT_UNAVAILABLE') as 'TORUS_ARTIFACT_UNAVAILABLE',
      status.error?.message ?? `transfer of ${id} failed`,
      { id, have: status.have, chunks: status.chunks },
    );
  // Complete in the store is not yet complete in the cluster's state: return once the node's state says so.
  await client.request('POST', `/v1/artifacts/${id}/announce`);
}

/** Polls the replicated holdings until every node of the chain holds the artifact completely (or no progress for 120 s). */
async function watchChain(client: ApiClient, io: CliIo, id: string, nodes: string[]): Promise<boolean> {
  const printer = new ProgressPrinter(io.stderr as CliIo['stderr'] & { isTTY?: boolean });
  const started = Date.now();
  // The bound for every node of the chain receiving the whole artifact, from the links as this node knows them.
  const { state } = await client.get<{ state: ClusterState }>('/v1/state');
  const b = boundView(boundFromState(state, id, Object.fromEntries(nodes.map((n) => [n, 'all' as const]))));
  const bound = b && {
    seconds: b.seconds,
    by: boundBy(b, (n) => (Object.hasOwn(state.nodes, n) ? state.nodes[n]!.name : n)),
  };
  let lastHave = -1;
  let lastChange = Date.now();
  for (;;) {
    const a = await client.get<ArtifactView>(`/v1/artifacts/${id}`);
    const have = nodes.reduce((s, n) => s + (a.holders.find((h) => h.node === n)?.have ?? 0), 0);
    const doneBytes = Math.round((have / Math.max(1, a.chunks)) * a.bytes);
    const sample = {
      label: `${a.name} → ${nodes.length} node(s)`,
      doneBytes,
      totalBytes: a.bytes * nodes.length,
      rateBps: doneBytes / Math.max(0.001, (Date.now() - started) / 1000),
      ...(bound ? { bound } : {}),
      elapsedSeconds: (Date.now() - started) / 1000,
    };
    if (have !== lastHave) {
      lastHave = have;
      lastChange = Date.now();
    }
    if (have >= a.chunks * nodes.length) {
      printer.done(sample);
      return true;
    }
    if (Date.now() - lastChange > 120_000) {
      printer.done(sample);
      return false;
    }
    printer.update(sample);
    await sleep(500);
  }
}
