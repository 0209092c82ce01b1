import { TorusError } from '../../protocols/errors.js';
import { decodeQuery } from '../query.js';
import { queryCodecs } from '../request-schemas.js';
import type { Route } from '../router.js';

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
      const query = decodeQuery(queryCodecs.logs, url.searchParams);
      const { rank = 0, stream = 'stdout', tail } = query;
      const follow = query.follow === '1' || query.follow === 'true';
      const abort = new AbortController();
      const stop = (): void => abort.abort();
      res.on('close', stop);
      shared.closing.addEventListener('abort', stop);
      try {
        const chunks = await facade.runnerLog(
          { instanceId: params.id ?? '', rank, stream, follow, tail },
          abort.signal,
        );
        res.writeHead(200, {
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        });
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
