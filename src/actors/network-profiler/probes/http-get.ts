/** Minimal HTTP client for probes: one request, bounded body, a hard timeout, abortable. */
import http from 'node:http';
import { TorusError } from '../../../protocols/errors.js';

export interface GetOptions {
  readonly timeoutMs: number;
  readonly maxBytes?: number;
  readonly agent?: http.Agent | false;
  readonly signal?: AbortSignal;
  readonly method?: string;
  /** Extra request headers (e.g. the probe proof). */
  readonly headers?: Readonly<Record<string, string>>;
}

export function httpGetJson(host: string, port: number, path: string, opts: GetOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const maxBytes = opts.maxBytes ?? 4096;
    let settled = false;
    const done = (error: Error | undefined, value?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(value);
    };
    const req = http.request(
      {
        host,
        port,
        path,
        method: opts.method ?? 'GET',
        agent: opts.agent ?? false,
        headers: { accept: 'application/json', ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let n = 0;
        res.on('data', (c: Buffer) => {
          n += c.length;
          if (n > maxBytes) {
            req.destroy();
            done(
              new TorusError(
                'TORUS_PROTOCOL_INVALID',
                `${host}:${port}${path}: response larger than ${maxBytes} bytes`,
              ),
            );
          } else chunks.push(c);
        });
        res.on('end', () => {
          if (res.statusCode !== 200)
            return done(new TorusError('TORUS_PROTOCOL_INVALID', `${host}:${port}${path}: HTTP ${res.statusCode}`));
          try {
            done(undefined, JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            done(new TorusError('TORUS_PROTOCOL_INVALID', `${host}:${port}${path}: not JSON`));
          }
        });
        res.on('error', (e) => done(e));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done(
        new TorusError('TORUS_RING_TIMEOUT', `${host}:${port}${path}: no answer within ${opts.timeoutMs} ms`, {
          host,
          port,
        }),
      );
    }, opts.timeoutMs);
    const onAbort = (): void => {
      req.destroy();
      done(new TorusError('TORUS_CANCELLED', `${host}:${port}${path}: cancelled`));
    };
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e) => done(e));
    req.end();
  });
}
