/**
 * Whether this node starts a runner at all: its exec policy (which commands it runs) and its runner quota. Checked
 * at spawn time, whoever proposed the instance; the quota's first refusal in a row is told once (the node logs it).
 */
import { DEFAULT_MAX_RUNNERS, execDecision, type ExecPolicy } from '../../../protocols/exec-policy.js';
import type { RunnerInstance } from '../../../protocols/runner-instance.js';

export class RunnerAdmission {
  readonly #nodeId: string;
  readonly #allowExec: ExecPolicy;
  readonly #maxRunners: number;
  readonly #onLimit: ((message: string) => void) | undefined;
  #atLimit = false;

  constructor(nodeId: string, allowExec?: ExecPolicy, maxRunners?: number, onLimit?: (message: string) => void) {
    this.#nodeId = nodeId;
    this.#allowExec = allowExec ?? false;
    this.#maxRunners = maxRunners ?? DEFAULT_MAX_RUNNERS;
    this.#onLimit = onLimit;
  }

  /** Why this node will not start a runner for `instance` while it holds `held` runners, or undefined. */
  refusal(instance: RunnerInstance, held: number): string | undefined {
    const node = this.#nodeId;
    if (instance.workload.kind === 'exec') {
      const command = instance.workload.command[0] ?? '';
      const decision = execDecision(this.#allowExec, command);
      if (!decision.allowed)
        return `node ${node} refuses to run ${JSON.stringify(command.slice(0, 200))}: ${decision.rule}`.slice(0, 900);
    }
    const max = this.#maxRunners;
    if (held < max) {
      this.#atLimit = false;
      return undefined;
    }
    const message = `node ${node} is at its runner quota: ${held} of ${max} runners (--max-runners=${max})`;
    if (!this.#atLimit) this.#onLimit?.(message);
    this.#atLimit = true;
    return message;
  }
}
