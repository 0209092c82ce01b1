/** What GET /v1/artifacts/transfers shows of a transfer, and of a corrupt chunk a peer served. */
import type { BoundView } from './state-bound.js';
import type { LayerRange } from './model/stage-chunks.js';
import type { TransferStats } from './transfer.js';

export interface TransferStatus {
  readonly id: string;
  name: string;
  state: 'preparing' | 'running' | 'complete' | 'failed';
  chunks: number;
  have: number;
  bytes: number;
  haveBytes: number;
  startedAt: number;
  endedAt?: number;
  /** bytes per second received by this transfer so far */
  rateBps: number;
  etaSeconds?: number;
  upstream?: string;
  /** a pipeline stage's transfer: only these layers' chunks (`chunks`, `bytes` and `have` count those) */
  stage?: LayerRange;
  sources: string[];
  bySource: TransferStats['bySource'];
  corrupt: Record<string, number>;
  error?: { code: string; message: string };
  /** the time no schedule beats for the chunks this transfer lacked at its start, over the measured links */
  bound?: BoundView;
}

export interface CorruptionReport {
  readonly at: number;
  readonly artifactId: string;
  readonly nodeId: string;
  readonly chunk: number;
}
