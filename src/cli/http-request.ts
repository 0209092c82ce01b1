/**
 * One request with its whole answer as text, over node:http or node:https (not fetch: its engine takes no
 * agent, and the https agent is where the CLI pins the node's certificate, pinned-tls.ts).
 */
import { request as httpRequest, type Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';

export interface TextAnswer {
  readonly status: number;
  readonly text: string;
}

export function requestText(
  url: string,
  o: {
    method: string;
    headers: Record<string, string>;
    body?: string | undefined;
    agent?: HttpAgent | HttpsAgent | undefined;
    signal?: AbortSignal;
  },
): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const headers =
      o.body === undefined ? o.headers : { ...o.headers, 'content-length': String(Buffer.byteLength(o.body)) };
    const req = send(
      url,
      { method: o.method, headers, ...(o.agent ? { agent: o.agent } : {}), ...(o.signal ? { signal: o.signal } : {}) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(o.body);
  });
}
