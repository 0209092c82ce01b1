/**
 * The runner effects still to perform, one at a time in log order (a stop finishes before a later start of the
 * same instance). A stop that arrives while the instance's own start is still waiting here takes that start and
 * everything queued for the instance with it: a node behind on its effects (runner stops wait for processes to
 * exit) never spawns a runner for an instance already deleted, and the backlog shrinks instead of growing with
 * the rate of placements.
 */
import type { SupervisorEffect } from './reactions.js';

export type PerformEffect = (effect: SupervisorEffect) => Promise<void> | void;

/** The instance an effect belongs to; tasks' cancels name only a task, so they belong to none. */
function instanceOf(effect: SupervisorEffect): string | undefined {
  switch (effect.type) {
    case 'start':
    case 'replace':
      return effect.instance.id;
    case 'stop':
    case 'peer':
    case 'task':
      return effect.instanceId;
    case 'cancel':
      return undefined;
  }
}

export class EffectQueue {
  readonly #perform: PerformEffect;
  readonly #onError: (effect: SupervisorEffect, error: unknown) => void;
  #pending: SupervisorEffect[] = [];
  #running: Promise<void> | undefined;
  #closed = false;
  #skipped = 0;

  constructor(perform: PerformEffect, onError: (effect: SupervisorEffect, error: unknown) => void) {
    this.#perform = perform;
    this.#onError = onError;
  }

  /** Effects waiting (not counting the one being performed). */
  get pending(): number {
    return this.#pending.length;
  }

  /** Effects dropped because their instance was stopped before they ran. */
  get skipped(): number {
    return this.#skipped;
  }

  push(effect: SupervisorEffect): void {
    if (this.#closed) return;
    if (effect.type === 'stop') this.#dropUnstarted(effect.instanceId);
    this.#pending.push(effect);
    this.#running ??= this.#drain();
  }

  /** Performs nothing more; what is being performed finishes. Resolves once it has. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#pending = [];
    await this.#running;
  }

  /** Resolves once every effect pushed so far has been performed (or dropped). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /**
   * Only when the instance's start (or re-placement) is still queued: then nothing of it has run since, and the
   * stop finds whatever ran before that start (a runner of an earlier plan) as it would have.
   */
  #dropUnstarted(instanceId: string): void {
    const started = this.#pending.findIndex(
      (e) => (e.type === 'start' || e.type === 'replace') && e.instance.id === instanceId,
    );
    if (started < 0) return;
    const kept = this.#pending.filter((e, i) => i < started || instanceOf(e) !== instanceId);
    this.#skipped += this.#pending.length - kept.length;
    this.#pending = kept;
  }

  async #drain(): Promise<void> {
    try {
      // Never inside push: an effect performed there could push again before this drain is recorded as running.
      await null;
      for (let effect = this.#pending.shift(); effect; effect = this.#pending.shift()) {
        try {
          await this.#perform(effect);
        } catch (error) {
          this.#onError(effect, error);
        }
      }
    } finally {
      this.#running = undefined;
    }
  }
}
