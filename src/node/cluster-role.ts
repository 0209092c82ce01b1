/**
 * This node's role as its cluster actor tells it. A node run without the cluster actor is `alone`; a cluster actor
 * that exists but does not answer (busy past the timeout, crashed and restarting) is not: the answer says the role
 * is `unknown` and why (`clusterUnavailable`), each such answer is counted by error code (/metrics:
 * torus_cluster_actor_unavailable_total), and a warning is logged when the actor stops answering and when it
 * answers again, not on every question (the dashboard and scrapers ask every few seconds).
 */
import { asTorusError } from '../protocols/errors.js';
import type { NodeRole, QuorumInfo } from '../api/node-facade.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Logger } from '../runtime/log.js';

export interface RoleAnswer {
  readonly role: NodeRole;
  /** The leader's node id (the API's `leaderId`); null or absent: none known. */
  readonly leader?: string | null | undefined;
  readonly quorum?: QuorumInfo | undefined;
  /** The cluster actor did not answer: role and quorum are unknown. */
  readonly clusterUnavailable?: { readonly code: string; readonly message: string } | undefined;
}

const ROLE_TIMEOUT_MS = 2_000;

export class ClusterRole {
  readonly #runtime: Runtime;
  readonly #log: Logger | undefined;
  readonly #timeoutMs: number;
  readonly #unavailable = new Map<string, number>();
  /** The error of the last unanswered question, until the actor answers again. */
  #down: string | undefined;

  constructor(runtime: Runtime, log?: Logger, timeoutMs = ROLE_TIMEOUT_MS) {
    this.#runtime = runtime;
    this.#log = log;
    this.#timeoutMs = timeoutMs;
  }

  /** Questions the cluster actor left unanswered since the node started, by error code. */
  unavailableCounts(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.#unavailable);
  }

  async ask(): Promise<RoleAnswer> {
    if (!this.#runtime.actors().includes('cluster')) return { role: 'alone' };
    // Crashed and not back yet: say so now. A question sent meanwhile would wait for the next incarnation (the
    // supervisor's backlog), then be answered by it or time out with a reason that says busy, not crashed.
    const down = this.#runtime.downCause('cluster');
    if (down !== undefined) return this.#unanswered('TORUS_ACTOR_FAILED', `the cluster actor is ${down}`);
    try {
      const answer = await this.#runtime.request<RoleAnswer>(
        'cluster',
        { type: 'role' },
        { timeoutMs: this.#timeoutMs },
      );
      if (this.#down !== undefined) this.#log?.warn('the cluster actor answers again', { was: this.#down });
      this.#down = undefined;
      return answer;
    } catch (error) {
      const { code, message } = asTorusError(error);
      return this.#unanswered(code, message);
    }
  }

  #unanswered(code: string, message: string): RoleAnswer {
    this.#unavailable.set(code, (this.#unavailable.get(code) ?? 0) + 1);
    if (this.#down === undefined) this.#log?.warn('the cluster actor does not answer; role unknown', { code, message });
    this.#down = code;
    return { role: 'unknown', clusterUnavailable: { code, message } };
  }
}
