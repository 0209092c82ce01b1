import type { ServerResponse } from 'node:http';
import { TorusError } from '../../protocols/errors.js';
import { redactEnv } from '../../http/redact.js';
import type { Route, RouteContext } from '../router.js';

/**
 * GET /v1/events as Server-Sent Events. Each applied event is one default (`message`) SSE event whose `id:`
 * is the event's global index, so a browser's EventSource resumes by itself with `Last-Event-ID`; scripts may
 * pass `?after=N` instead. Without either, every retained event is replayed first. If the retained log no
 * longer reaches the requested index, a `gap` event says which indices were skipped (refetch /v1/state).
 * Non-indexed notices (bench progress) are named events (`bench`) without an id, so they never move the
 * resume point. Comments (`: heartbeat`) keep proxies and idle timers from closing the stream.
 */
export const eventsRoute: Route = {
  method: 'GET',
  path: '/v1/events',
  summary: 'Server-Sent Events: every applied event (id = index), resumable with Last-Event-ID',
  handler: async (ctx) => {
    const after = resumeIndex(ctx);
    const leave = ctx.shared.sse.enter(); // 503 TORUS_LIMIT_REACHED at --max-sse-clients
    try {
      await stream(ctx, after);
    } finally {
      leave();
    }
    return undefined;
  },
};

/** The largest event index a resume may name (15 decimal digits), as the document shows it. */
export const MAX_EVENT_INDEX = 999_999_999_999_999;

function resumeIndex({ req, url }: RouteContext): number {
  const header = req.headers['last-event-id'];
  const query = url.searchParams.get('after');
  const [raw, where, path] =
    typeof header === 'string' && header !== '' ? [header, 'headers', 'last-event-id'] : [query, 'query', 'after'];
  if (raw === null || raw === undefined) return 0;
  if (!/^\d{1,15}$/.test(raw)) {
    // at most MAX_EVENT_INDEX
    throw new TorusError('TORUS_API_VALIDATION', `${where} ${path}: expected a non-negative integer event index`, {
      where,
      path,
    });
  }
  return Number(raw);
}

async function stream({ req, res, facade, shared }: RouteContext, after: number): Promise<void> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  res.on('close', stop);
  shared.closing.addEventListener('abort', stop);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  req.socket.setNoDelay(true);
  res.write('retry: 2000\n: connected\n\n');
  const heartbeat = setInterval(() => void write(res, `: heartbeat ${Date.now()}\n\n`), shared.heartbeatMs);
  const notice = (name: string, data: unknown): void =>
    void write(res, `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  shared.broadcast.add(notice);
  try {
    let expected = after + 1;
    for await (const entry of facade.events(after, abort.signal)) {
      if (abort.signal.aborted) break;
      if (entry.index < expected) continue; // never send an index twice on one stream
      if (entry.index > expected)
        await write(res, `event: gap\ndata: ${JSON.stringify({ from: expected, to: entry.index - 1 })}\n\n`);
      await write(res, `id: ${entry.index}\ndata: ${JSON.stringify(redactEnv(entry))}\n\n`);
      expected = entry.index + 1;
    }
  } finally {
    clearInterval(heartbeat);
    shared.broadcast.delete(notice);
    shared.closing.removeEventListener('abort', stop);
    res.off('close', stop);
    if (!res.writableEnded) res.end();
  }
}

/** Writes with backpressure: waits for `drain` instead of buffering without bound for a slow client. */
function write(res: ServerResponse, text: string): Promise<void> {
  if (res.writableEnded || res.destroyed) return Promise.resolve();
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
