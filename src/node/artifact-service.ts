/** Builds the node's artifact service over its actors: state from the topology keeper, proposals to the cluster. */
import type { StateAnswer } from '../actors/topology-keeper/queries.js';
import { ArtifactService } from '../artifacts/service.js';
import { createLogger } from '../runtime/log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { NodeConfig } from './config.js';
import type { ClusterCredential } from './credentials.js';
import { hostname } from 'node:os';

export function createArtifactService(
  runtime: Runtime,
  config: NodeConfig,
  nodeId: string,
  credential: ClusterCredential,
): ArtifactService {
  return new ArtifactService({
    nodeId,
    nodeName: config.name ?? hostname(),
    dataDir: config.dataDir,
    dataKey: credential.mode === 'secret' ? credential.keys.dataKey : null,
    log: createLogger({ component: 'artifacts' }),
    runCpuTask: (task, input) => runtime.pool.run(task, input),
    cluster: {
      state: async () => (await runtime.request<StateAnswer>('topology-keeper', { type: 'state' })).state,
      propose: async (event) => {
        await runtime.request(
          'cluster',
          { type: 'propose', event: event as unknown as Record<string, unknown> },
          { timeoutMs: 5000 },
        );
      },
    },
  });
}
