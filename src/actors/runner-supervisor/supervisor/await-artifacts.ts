/**
 * The supervisor's side of the artifact gate (src/artifacts/runner-gate.ts, on the node's main thread): asks at
 * most every `pollMs` until the node holds every artifact of the instance (→ the runner's TORUS_ARTIFACT_* environment) and
 * its stage of the workload's model (→ TORUS_MODEL_DIR), or a transfer failed (→ rejects with its reason). A gate
 * that does not answer for `giveUpMs` fails the runner too, so it never waits forever. A gate that held its answer
 * for `pollMs` or longer (it waits for the transfer's end itself) is asked again at once.
 */
import { shardOf, type RunnerInstance } from '../../../protocols/runner-instance.js';
import type { Body } from '../../../protocols/mailbox.js';

export const ARTIFACTS_SERVICE = 'artifacts';

/**
 * The model part of the request: a pipeline stage's layers (this node's shard), or the whole model (tensor
 * sharding: every node holds a slice of every layer, so it fetches every tensor).
 */
export function modelRequest(instance: RunnerInstance, nodeId: string) {
  if (!instance.model) return undefined;
  const shard = shardOf(instance, nodeId);
  const pipeline = instance.sharding !== 'tensor' && shard && shard.endLayer > shard.startLayer;
  return {
    id: instance.model,
    ...(pipeline ? { stage: { fromLayer: shard.startLayer, toLayer: shard.endLayer } } : {}),
  };
}

export async function awaitArtifacts(
  instance: RunnerInstance,
  nodeId: string,
  cancelled: () => boolean,
  ask: (body: Body) => Promise<unknown>,
  pollMs = 500,
  giveUpMs = 30_000,
): Promise<Readonly<Record<string, string>>> {
  let lastAnswer = Date.now();
  let lastError = '';
  while (!cancelled()) {
    const askedAt = Date.now();
    try {
      const answer = (await ask({
        type: 'runner-artifacts',
        instanceId: instance.id,
        artifacts: [...(instance.artifacts ?? [])],
        order: [...instance.nodes],
        ...(instance.model ? { model: modelRequest(instance, nodeId) } : {}),
      })) as { state?: unknown; env?: unknown; reason?: unknown } | null;
      lastAnswer = Date.now();
      if (answer?.state === 'ready') return stringRecord(answer.env);
      if (answer?.state === 'failed')
        throw new GateFailure(typeof answer.reason === 'string' ? answer.reason : 'artifact transfer failed');
    } catch (error) {
      if (error instanceof GateFailure) throw error;
      lastError = error instanceof Error ? error.message : String(error);
      if (Date.now() - lastAnswer > giveUpMs)
        throw new Error(
          `the node's artifact service did not answer for ${Math.round(giveUpMs / 1000)} s: ${lastError}`,
        );
    }
    const rest = pollMs - (Date.now() - askedAt);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  }
  throw new Error('cancelled');
}

class GateFailure extends Error {}

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) if (typeof x === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) out[k] = x;
  return out;
}
