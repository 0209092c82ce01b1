/**
 * `torus bench ring --live --gloo`, the client's part: the node runs torch Gloo's all_reduce
 * on the same nodes after the ring (POST /v1/bench/ring with `gloo: true`, src/bench/live/gloo-bench-live.ts) and returns
 * its rows with ring ÷ Gloo per size; this prints them beside the ring's.
 */
import type { GlooResult } from '../bench/ring/gloo.js';
import { renderTable } from './table.js';

/** What the live result carries for the comparison (src/bench/live/gloo-bench-live.ts compareWithGloo). */
export interface GlooComparisonRow {
  readonly size: number;
  readonly ringBusbw: number;
  readonly glooBusbw: number;
  readonly ratio: number | null;
}

/** Ring all-reduce rows beside Gloo's at the same sizes: busbw of each (GB/s) and ring ÷ Gloo. */
export function renderSideBySide(gloo: GlooResult, rows: readonly GlooComparisonRow[]): string {
  if (!gloo.ok) return `# ${gloo.reason}\n`;
  const body = rows.map((r) => [
    String(r.size),
    r.ringBusbw.toFixed(3),
    r.glooBusbw.toFixed(3),
    r.ratio === null ? '-' : `${r.ratio.toFixed(2)}×`,
  ]);
  return `# ring vs torch Gloo all_reduce on the same nodes (a torus job; ${gloo.iface}). The ring dials each neighbour at its planned address, Gloo uses one interface for every pair: where the plan's ring runs over links the mesh address is not on (a ring of cables), the two ran on different links\n${renderTable(['size', 'ring busbw', 'gloo busbw', 'ring/gloo'], body)}`;
}
