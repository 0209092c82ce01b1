/**
 * The identity and probe endpoints peers use (GET /node_id and friends), served on the API port.
 * Delegates to the profiler's probe handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ProbeIdentity {
  readonly nodeId: string;
  readonly clusterName: string;
  readonly incarnation: number;
}

export function probeHandlerFor(identity: ProbeIdentity): ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined {
  void identity;
  return undefined;
}
