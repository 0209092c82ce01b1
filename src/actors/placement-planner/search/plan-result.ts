import type { Host } from './hosts-by-node.js';
import type { Backend, Sharding } from './placement-request.js';
import type { InterfaceType } from './placement-input.js';
import type { Prediction } from './cost-model.js';
import type { Shard } from '../../../protocols/instance-plan.js';

/** The plan and refusal shapes the planner returns (as data, never thrown). See docs/placement.md. */
/** One node's layers of a plan: the wire shape (protocols/instance-plan.ts), the one definition. */
export type { Shard };

export interface Instance {
  readonly id: string;
  readonly backend: Backend;
  readonly sharding: Sharding;
  /** Rank order. */
  readonly nodes: readonly string[];
  readonly shards: readonly Shard[];
  readonly port: number;
  readonly hostsByNode?: Readonly<Record<string, readonly Host[]>>;
  readonly jacclDevices?: readonly (readonly (string | null)[])[];
  readonly jacclCoordinators?: Readonly<Record<string, string>>;
  /** Per node, an address every other placed node reaches (torch's full mesh); see mesh-addresses.ts. */
  readonly meshAddresses?: Readonly<Record<string, string>>;
}

export interface HopDirection {
  readonly ip: string;
  readonly type: InterfaceType;
  readonly measured: boolean;
  readonly bandwidthBps: number | null;
  readonly rttMs: number | null;
}

export interface HopExplanation {
  readonly from: string;
  readonly to: string;
  /** The address `from` dials `to` at, and the way back; null where only RDMA joins them (jaccl). */
  readonly forward: HopDirection | null;
  readonly backward: HopDirection | null;
}

export type DropKind = 'memory' | 'layers' | 'rdma' | 'ring' | 'coordinator' | 'network' | 'preference' | 'predicted';

export interface CandidateNote {
  readonly nodes: readonly string[];
  readonly outcome: 'chosen' | 'dropped' | 'not-evaluated';
  readonly kind?: DropKind;
  readonly why: string;
  /** with `workload.artifactBytes`: bytes the artifacts' transfers would move to this set (artifact-rule.ts) */
  readonly bytesToMove?: number;
}

export interface SizeNote {
  readonly size: number;
  /**
   * 'exhaustive': every set of this size was generated; 'greedy': the bounded family; 'pinned': the one set the
   * request named (docs/placement.md); 'kept-stages': the orders that keep a model pipeline's surviving stages
   * (kept-stages.ts).
   */
  readonly generation: 'exhaustive' | 'greedy' | 'skipped' | 'pinned' | 'kept-stages';
  readonly sets: number;
  readonly feasible: number;
  readonly dropped: Readonly<Partial<Record<DropKind, number>>>;
  readonly why?: string;
}

export interface Explanation {
  readonly seed: number;
  readonly request: {
    readonly sharding: Sharding;
    readonly backend: Backend;
    readonly workload: string;
    readonly minNodes: number;
    readonly requiredNodes: readonly string[];
    /** A pinned placement: the set and ring order the request named. */
    readonly nodes?: readonly string[];
  };
  readonly sizes: readonly SizeNote[];
  /** Up to MAX_CANDIDATE_NOTES candidate sets with their outcome; `candidatesOmitted` counts the rest. */
  readonly candidates: readonly CandidateNote[];
  readonly candidatesOmitted: number;
  readonly chosen?: {
    readonly nodes: readonly string[];
    readonly why: readonly string[];
    readonly hasLeaf: boolean;
    readonly cachedScore: number;
    readonly availableMemoryBytes: number;
    readonly slowestHopBps: number | null;
    readonly rttSumMs: number;
    readonly search: string;
    readonly forced?: string;
    readonly bytesToMove?: number;
    /**
     * How the set was chosen: by predicted speed, by today's preference order (no complete prediction), or not at
     * all: pinned by the request; kept-stages: a model pipeline's re-placement kept its surviving stages and gave
     * only the lost ones to spare nodes (kept-stages.ts).
     */
    readonly by: 'prediction' | 'preference' | 'pinned' | 'kept-stages';
    /** With `by: prediction`: the next best option and its prediction. */
    readonly runnerUp?: { readonly nodes: readonly string[]; readonly predicted: Prediction };
    /** With `by: prediction`: how many feasible options had a complete prediction. */
    readonly optionsCompared?: number;
  };
  readonly hops?: readonly HopExplanation[];
  readonly predictedAllReduce1GiB?: { readonly seconds: number | null; readonly basis: string };
  readonly coordinator?: { readonly node: string; readonly routes: Readonly<Record<string, HopDirection>> };
}

export type RefusalKind = 'memory' | 'tensor' | 'ring' | 'rdma' | 'coordinator' | 'layers' | 'nodes';

export interface Refusal {
  readonly kind: RefusalKind;
  readonly message: string;
  readonly explanation: Explanation;
}

export interface Plan {
  readonly instance: Instance;
  /** The cost model's answer for this plan (cost-model.ts); null totals name what was unmeasured. */
  readonly predicted: Prediction;
  readonly explanation: Explanation;
}

export type PlanResult = Plan | { readonly refusal: Refusal };

export function isRefusal(result: PlanResult): result is { readonly refusal: Refusal } {
  return 'refusal' in result;
}

export const MAX_CANDIDATE_NOTES = 40;
