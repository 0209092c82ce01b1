/** Device figures on a lab cluster, shared by the lab benchmarks (placement-quality --lab, model-placement). */
import type { NodeCluster } from '../../src/lab/index.js';

/**
 * The start-up measurements of 5 nodes starting at once on one shared machine disturb each other (figures
 * 5× apart between identical hosts); a machine of its own would not. So each node measures again, one after the
 * other once the cluster is quiet, as POST /v1/device/measure lets any user do, and the state is awaited.
 */
export async function remeasureDevices(c: NodeCluster, progress: (line: string) => void): Promise<void> {
  const since = Date.now();
  for (const n of c.nodes) {
    const res = await n.fetch('/v1/device/measure', { method: 'POST' });
    if (res.status !== 200) throw new Error(`h${n.host}: device measure ${res.status} ${await res.text()}`);
  }
  await c.converged(60_000, (vs) =>
    vs.every((v) =>
      v.topology.nodes.every((x) => ((x as { device?: { measuredAt?: number } }).device?.measuredAt ?? 0) >= since),
    ),
  );
  progress('device figures measured again, one node at a time');
}
