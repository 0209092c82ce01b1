/**
 * A minimal Server-Sent Events client over node:http(s) (Node 20 has no EventSource, and fetch takes no
 * certificate-pinning agent). Hand-written because the format is a few lines of parsing and the CLI (`bench ring --live`) and tests need to set `Last-Event-ID`
 * and see comments (heartbeats), which EventSource hides.
 */
import type { IncomingMessage } from 'node:http';
import type { Agent } from 'node:https';
import { getStream } from '../http/http-stream.js';

export interface SseMessage {
  /** `message` unless the server named it (`bench`, `gap`). */
  readonly event: string;
  readonly data: string;
  readonly id?: string | undefined;
}

export type SseItem = SseMessage | { readonly comment: string };

export async function* readSse(
  url: string,
  options: {
    lastEventId?: string | number;
    signal?: AbortSignal;
    headers?: Record<string, string>;
    agent?: Agent | undefined;
  } = {},
): AsyncGenerator<SseItem> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  let res: IncomingMessage;
  try {
    res = await getStream(url, headers, options.signal, options.agent);
  } catch (error) {
    if (options.signal?.aborted) return;
    throw error;
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    let text = '';
    for await (const part of res) {
      text += String(part);
      if (text.length > 500) break;
    }
    res.destroy();
    throw new Error(`${url}: HTTP ${status} ${text.slice(0, 500)}`);
  }
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for await (const chunk of res as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
          id = undefined;
        } else if (line.startsWith(':')) {
          yield { comment: line.slice(1).trim() };
        } else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') data.push(value);
          else if (field === 'event') event = value;
          else if (field === 'id') id = value;
        }
      }
    }
  } catch (error) {
    if (options.signal?.aborted) return;
    throw error;
  }
}
