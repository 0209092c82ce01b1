/** The answers about this node's artifact transfers (docs/artifacts.md, Transfer). */
import { MapOf, StringEnum, Type } from '../../protocols/schema-kit.js';
import { str, int, CLOSED, open, epochMs } from './kit.js';

export const artifactResponses = {
  ArtifactTransfers: Type.Object(
    {
      transfers: Type.Array(
        open("one of this node's transfers (docs/artifacts.md, Transfer)", {
          id: str,
          name: str,
          state: StringEnum(['preparing', 'running', 'complete', 'failed']),
          chunks: int,
          have: int,
          bytes: int,
          haveBytes: int,
          startedAt: epochMs('started'),
          endedAt: epochMs('ended'),
          rateBps: Type.Integer({ description: 'bytes/s received so far' }),
          etaSeconds: int,
          upstream: str,
          stage: Type.Object(
            { fromLayer: int, toLayer: int },
            { ...CLOSED, description: "a model's pipeline stage: only these layers' chunks (end exclusive)" },
          ),
          sources: Type.Array(str),
          bySource: MapOf(Type.Object({ chunks: int, bytes: int }, CLOSED)),
          corrupt: MapOf(int),
          error: Type.Object({ code: str, message: str }, CLOSED),
          bound: Type.Object(
            {
              seconds: Type.Number({ minimum: 0 }),
              node: Type.String({ description: "the node whose ports set it; 'holders': the holders together" }),
              side: StringEnum(['in', 'out']),
              bytes: int,
              capacityBps: Type.Number({ description: 'bits/s: the sum over its ports of the fastest link each' }),
            },
            {
              ...CLOSED,
              description:
                'the time no schedule beats for the chunks the transfer lacked at its start, over the measured links (docs/artifacts.md, The bound)',
            },
          ),
        }),
      ),
      corruption: Type.Array(
        Type.Object({ at: epochMs('reported'), artifactId: str, nodeId: str, chunk: int }, CLOSED),
      ),
    },
    CLOSED,
  ),
};
