/**
 * A GET whose answer is read as it arrives, for as long as the server keeps it open (a followed log). Not `fetch`:
 * its engine (undici) cuts a body that stays quiet for 300 s, and a rank may well print nothing for that long.
 */
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';

/**
 * Resolves with the response once its headers arrive; the body is an async iterable of Buffers. `signal` ends
 * both. `agent`: the CLI's certificate-pinning agent for an https URL (cli/pinned-tls.ts).
 */
export function getStream(
  url: string,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal | undefined,
  agent?: HttpAgent | HttpsAgent,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(
      url,
      { headers: { ...headers }, ...(signal ? { signal } : {}), ...(agent ? { agent } : {}) },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}
