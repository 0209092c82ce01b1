/**
 * What a node knows of the other ranks of the instances it runs: their runners' statuses (from the applied cluster
 * state) and, per exec job, which nodes' commands exited 0 (the job completes when every rank's did). Kept only for
 * instances with a runner here, and forgotten with it: a node that runs none would otherwise keep one entry for
 * every instance the cluster ever placed.
 */
import type { RunnerInstance } from '../../../protocols/runner-instance.js';
import type { RunnerStatus } from '../../../protocols/runner-status.js';

export class PeerRanks {
  readonly #statuses = new Map<string, Map<string, RunnerStatus>>();
  readonly #exitedOk = new Map<string, Set<string>>();

  /** The other nodes' runner statuses of `instanceId`, by node. */
  statuses(instanceId: string): ReadonlyMap<string, RunnerStatus> {
    return this.#statuses.get(instanceId) ?? new Map<string, RunnerStatus>();
  }

  setStatus(instanceId: string, nodeId: string, status: RunnerStatus): void {
    const peers = this.#statuses.get(instanceId) ?? new Map<string, RunnerStatus>();
    this.#statuses.set(instanceId, peers.set(nodeId, status));
  }

  /** `nodeId`'s command of `instance` exited 0; true once every rank's has, this node's (`self`) included. */
  exitedOk(instance: RunnerInstance, nodeId: string, self: string): boolean {
    const done = this.#exitedOk.get(instance.id) ?? new Set<string>();
    this.#exitedOk.set(instance.id, done.add(nodeId));
    return instance.nodes.every((n) => done.has(n)) && done.has(self);
  }

  forget(instanceId: string): void {
    this.#statuses.delete(instanceId);
    this.#exitedOk.delete(instanceId);
  }

  /** Instances remembered, counted (tests check it stays bounded by what runs here). */
  retained(): { peerStatuses: number; exitedOk: number } {
    return { peerStatuses: this.#statuses.size, exitedOk: this.#exitedOk.size };
  }
}
