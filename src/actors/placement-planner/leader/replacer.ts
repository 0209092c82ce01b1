/**
 * Automatic re-placement (exo deletes the instance and waits for a person): when an applied event leaves an
 * instance without some of its nodes, the leader asks itself to re-place it on the nodes that remain. Only the
 * leader acts, so every instance is re-placed once; followers just watch.
 */
import type { ReplacementNeed } from '../../topology-keeper/placement-state.js';
import type { IndexedEvent } from '../../../protocols/events.js';
import type { Logger } from '../../../runtime/log.js';
import type { Runtime } from '../../../runtime/runtime.js';

// InstanceFailed: a failed job with restart policy on-failure is restarted (re-placed) as a whole group.
const TRIGGERS = new Set(['NodeGone', 'InstanceNeedsReplacement', 'NodeJoined', 'InstanceFailed']);

export class Replacer {
  readonly #runtime: Runtime;
  readonly #log: Logger;
  readonly #inFlight = new Set<string>();
  #scheduled = false;

  constructor(runtime: Runtime, log: Logger) {
    this.#runtime = runtime;
    this.#log = log;
  }

  /** Called with every applied event. */
  observe(entry: IndexedEvent): void {
    if (!TRIGGERS.has(entry.event.type) || this.#scheduled) return;
    this.#scheduled = true;
    setTimeout(() => {
      this.#scheduled = false;
      void this.#sweep();
    }, 50).unref();
  }

  async #sweep(): Promise<void> {
    if (this.#runtime.shuttingDown) return;
    try {
      const role = await this.#runtime.request<{ role: string }>('cluster', { type: 'role' }, { timeoutMs: 2_000 });
      if (role.role !== 'leader') return;
      const { instances } = await this.#runtime.request<{ instances: readonly ReplacementNeed[] }>('topology-keeper', {
        type: 'toReplace',
      });
      for (const need of instances) {
        if (this.#inFlight.has(need.instanceId)) continue;
        this.#inFlight.add(need.instanceId);
        this.#log.info('re-placing instance', { instance: need.instanceId, reason: need.reason });
        this.#runtime
          .request(
            'cluster',
            { type: 'command', command: { type: 'ReplaceInstance', instanceId: need.instanceId, reason: need.reason } },
            { timeoutMs: 60_000 },
          )
          .catch((error: unknown) => this.#log.warn('re-placement failed', { instance: need.instanceId, error }))
          .finally(() => this.#inFlight.delete(need.instanceId));
      }
    } catch (error) {
      if (!this.#runtime.shuttingDown) this.#log.debug('re-placement sweep skipped', { error });
    }
  }
}
