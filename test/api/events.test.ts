import t from 'tap';
import { readSse, type SseItem, type SseMessage } from '../../src/cli/sse-client.js';
import { InProcessNode, seedCluster } from './fixtures/in-process-node.js';
import { AUTH, raw, sendJson, startApi } from './fixtures/harness.js';

const isMessage = (item: SseItem): item is SseMessage => 'data' in item;

/** Collects stream items until `stop` says so (or the timeout fails the test). */
async function collect(
  url: string,
  opts: { lastEventId?: number },
  stop: (items: SseItem[]) => boolean,
  onOpen?: () => void,
): Promise<SseItem[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 5000);
  const items: SseItem[] = [];
  try {
    let opened = false;
    for await (const item of readSse(url, { ...opts, headers: AUTH, signal: abort.signal })) {
      items.push(item);
      if (!opened) {
        opened = true;
        onOpen?.();
      }
      if (stop(items)) break;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return items;
}

t.test('replays retained events with id = index, then live ones', async (t) => {
  const { api, node } = await startApi(t);
  const last = node.cluster.lastIndex;
  const items = await collect(
    `${api.url}/v1/events?after=0`,
    {},
    (xs) => xs.filter(isMessage).length === last + 1,
    () => setTimeout(() => node.apply({ type: 'NodeGone', nodeId: 'node-c', reason: 'test' }), 50),
  );
  const messages = items.filter(isMessage);
  t.same(
    messages.map((m) => Number(m.id)),
    Array.from({ length: last + 1 }, (_, i) => i + 1),
    'every index once, in order',
  );
  for (const m of messages) t.equal(JSON.parse(m.data).index, Number(m.id));
  t.match(JSON.parse(messages.at(-1)!.data), { index: last + 1, event: { type: 'NodeGone', nodeId: 'node-c' } });
  t.equal(messages[0]?.event, 'message');
});

t.test('resumes after Last-Event-ID (header wins over ?after)', async (t) => {
  const { api, node } = await startApi(t);
  const last = node.cluster.lastIndex;
  const items = await collect(
    `${api.url}/v1/events?after=3`,
    { lastEventId: last - 2 },
    (xs) => xs.filter(isMessage).length === 2,
  );
  t.same(
    items.filter(isMessage).map((m) => Number(m.id)),
    [last - 1, last],
  );
});

t.test('heartbeat comments keep an idle stream alive', async (t) => {
  const { api, node } = await startApi(t);
  const items = await collect(`${api.url}/v1/events`, { lastEventId: node.cluster.lastIndex }, (xs) =>
    xs.some((x) => 'comment' in x && x.comment.startsWith('heartbeat')),
  );
  t.ok(items.some((x) => 'comment' in x && x.comment === 'connected'));
  t.notOk(items.some(isMessage), 'nothing new, nothing sent');
});

t.test('a gap in the retained log is announced', async (t) => {
  const node = new InProcessNode('node-a', true, { retain: 5 });
  seedCluster(node, ['node-a', 'node-b']);
  const { api } = await startApi(t, { node });
  const last = node.cluster.lastIndex;
  const items = await collect(`${api.url}/v1/events`, { lastEventId: 2 }, (xs) => xs.filter(isMessage).length === 6);
  const [gap, ...rest] = items.filter(isMessage);
  t.equal(gap?.event, 'gap');
  t.equal(gap?.id, undefined, 'a gap notice does not move the resume point');
  t.same(JSON.parse(gap?.data ?? '{}'), { from: 3, to: last - 5 });
  t.same(
    rest.map((m) => Number(m.id)),
    [last - 4, last - 3, last - 2, last - 1, last],
  );
});

t.test('malformed resume points are 400s naming the header or query', async (t) => {
  const { api } = await startApi(t);
  const bad = await raw(api.url, 'GET', '/v1/events', undefined, { 'last-event-id': 'abc' });
  t.equal(bad.status, 400);
  t.match(bad.json(), {
    error: { code: 'TORUS_API_VALIDATION', details: { where: 'headers', path: 'last-event-id' } },
  });
  const neg = await raw(api.url, 'GET', '/v1/events?after=-1');
  t.equal(neg.status, 400);
  t.match(neg.json(), { error: { details: { where: 'query', path: 'after' } } });
});

t.test('bench progress arrives as named `bench` notices without ids', async (t) => {
  const { api, node } = await startApi(t);
  let runId = '';
  const items = await collect(
    `${api.url}/v1/events`,
    { lastEventId: node.cluster.lastIndex },
    (xs) => xs.some((x) => isMessage(x) && x.event === 'bench' && JSON.parse(x.data).status === 'done'),
    () => {
      void sendJson(api.url, 'POST', '/v1/bench/ring', { minBytes: 8, maxBytes: 32 }).then((r) => (runId = r.body.id));
    },
  );
  const bench = items.filter(isMessage).filter((m) => m.event === 'bench');
  t.ok(bench.every((m) => m.id === undefined));
  const last = JSON.parse(bench.at(-1)!.data);
  t.equal(last.id, runId);
  t.match(last, { status: 'done', progress: { done: 3, total: 3 }, result: { rows: Array } });
});

t.test('disconnects and server close release every subscription', async (t) => {
  const { api, node } = await startApi(t);
  await collect(`${api.url}/v1/events`, {}, (xs) => xs.filter(isMessage).length >= 1);
  for (let i = 0; i < 50 && node.feed.subscribers > 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(node.feed.subscribers, 0, 'client abort ends the facade iterator');

  const abort = new AbortController();
  const open = (async () => {
    const seen: SseItem[] = [];
    for await (const item of readSse(`${api.url}/v1/events`, {
      lastEventId: node.cluster.lastIndex,
      headers: AUTH,
      signal: abort.signal,
    }))
      seen.push(item);
    return seen;
  })();
  while (node.feed.subscribers === 0) await new Promise((r) => setTimeout(r, 10));
  const timer = setTimeout(() => abort.abort(), 3000);
  await api.close();
  const seen = await open;
  clearTimeout(timer);
  t.notOk(abort.signal.aborted, 'the stream ended because the server closed, not by timeout');
  t.ok(seen.length >= 1);
  t.equal(node.feed.subscribers, 0);
});
