import { TorusError, ValidationError } from '../../core/errors.js';
import type { Route } from '../router.js';

const MAX_TAIL = 16 * 1024 * 1024;

/**
 * GET /v1/instances/:id/logs?rank=N[&stream=stdout|stderr][&follow=1][&tail=BYTES]: a rank's output as plain text,
 * from any node (the facade fetches it from the node that holds the runner). With `follow`, the answer stays open
 * and carries what the rank writes until its command has ended for good (it exited and the job will not rerun it,
 * or the job is over or deleted). `tail` starts that many bytes before the end (the dashboard's log tail). Usable
 * by curl.
 */
export const logRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/v1/instances/:id/logs',
    summary: "a rank's stdout or stderr as text; follow=1 streams it until the job ends",
    peer: true,
    handler: async ({ req, res, url, params, facade, shared }) => {
      if (!facade.runnerLog) throw new TorusError('TORUS_API_NOT_FOUND', 'logs are not available on this node');
      const rankText = url.searchParams.get('rank') ?? '0';
      if (!/^\d{1,6}$/.test(rankText)) throw new ValidationError('query', 'rank', 'expected a rank number');
      const stream = url.searchParams.get('stream') ?? 'stdout';
      if (stream !== 'stdout' && stream !== 'stderr') throw new ValidationError('query', 'stream', 'expected stdout or stderr');
      const follow = ['1', 'true'].includes(url.searchParams.get('follow') ?? '');
      const tailText = url.searchParams.get('tail');
      if (tailText !== null && (!/^\d{1,8}$/.test(tailText) || Number(tailText) > MAX_TAIL)) throw new ValidationError('query', 'tail', `expected a byte count up to ${MAX_TAIL}`);
      const tail = tailText === null ? undefined : Number(tailText);
      const abort = new AbortController();
      const stop = (): void => abort.abort();
      res.on('close', stop);
      shared.closing.addEventListener('abort', stop);
      try {
        const chunks = await facade.runnerLog({ instanceId: params.id ?? '', rank: Number(rankText), stream, follow, tail }, abort.signal);
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
        res.flushHeaders();
        req.socket.setNoDelay(true);
        for await (const chunk of chunks) {
          if (abort.signal.aborted) break;
          if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
        }
        res.end();
        return undefined;
      } finally {
        res.off('close', stop);
        shared.closing.removeEventListener('abort', stop);
      }
    },
  },
];
