/**
 * A minimal Server-Sent Events client over fetch (Node 20 has no EventSource). Hand-written because the
 * format is a few lines of parsing and the CLI (`bench ring --live`) and tests need to set `Last-Event-ID`
 * and see comments (heartbeats), which EventSource hides.
 */
export interface SseMessage {
  /** `message` unless the server named it (`bench`, `gap`). */
  readonly event: string;
  readonly data: string;
  readonly id?: string | undefined;
}

export type SseItem = SseMessage | { readonly comment: string };

export async function* readSse(url: string, options: { lastEventId?: string | number; signal?: AbortSignal; headers?: Record<string, string> } = {}): AsyncGenerator<SseItem> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const res = await fetch(url, { headers, signal: options.signal ?? null });
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    throw new Error(`${url}: HTTP ${res.status} ${text.slice(0, 500)}`);
  }
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
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
