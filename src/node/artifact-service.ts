/**
 * Builds the node's artifact service over its actors: state from the topology keeper, proposals to the cluster,
 * and waits on this node's applied events (the feed) for a user's write to be readable here.
 */
import type { StateAnswer } from '../actors/topology-keeper/queries.js';
import { ArtifactService } from '../artifacts/service.js';
import { createLogger } from '../runtime/log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { NodeConfig } from './config.js';
import type { ClusterCredential } from './credentials.js';
import { hostname } from 'node:os';
import type { EventFeed } from '../api/event-feed.js';
import { waitForState } from '../api/wait-for-state.js';

export function createArtifactService(
  runtime: Runtime,
  config: NodeConfig,
  nodeId: string,
  credential: ClusterCredential,
  feed: EventFeed,
): ArtifactService {
  const state = async () => (await runtime.request<StateAnswer>('topology-keeper', { type: 'state' })).state;
  return new ArtifactService({
    nodeId,
    nodeName: config.name ?? hostname(),
    dataDir: config.dataDir,
    dataKey: credential.mode === 'secret' ? credential.keys.dataKey : null,
    log: createLogger({ component: 'artifacts' }),
    runCpuTask: (task, input) => runtime.pool.run(task, input),
    cluster: {
      state,
      propose: async (event) => {
        await runtime.request(
          'cluster',
          { type: 'propose', event: event as unknown as Record<string, unknown> },
          { timeoutMs: 5000 },
        );
      },
      until: (done, timeoutMs, onTimeout) =>
        waitForState(feed, {
          afterIndex: feed.lastIndex,
          // Holdings change with the artifact events, and a node that leaves takes its holdings with it.
          relevant: (event) => event.type.startsWith('Artifact') || event.type.startsWith('Node'),
          check: async () => (done(await state()) ? true : undefined),
          timeoutMs,
          onTimeout,
        }).then(() => undefined),
    },
  });
}
