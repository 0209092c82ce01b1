/**
 * Performs one agreement step's effects for ClusterNode, in array order (the contract is on AgreementEffect).
 * The node's state is written through the shell at once, so listeners of 'applied' and 'installed' (emitted
 * synchronously) already read the new state.
 */
import { asTorusError, TorusError } from '../../protocols/errors.js';
import type { Logger } from '../../runtime/log.js';
import type { IndexedEnvelope, PeerFrame } from '../../protocols/peer-frames.js';
import type { AgreementEffect, SavedVote } from './agreement/types.js';
import type { RoleInfo } from './cluster-node-options.js';
import type { StateMachine } from './agreement/state-machine.js';

/** What performing effects needs from the node. */
export interface EffectShell<S> {
  readonly replica: StateMachine<S>;
  readonly log: Logger;
  getState(): S;
  setState(state: S): void;
  send(to: string, frame: PeerFrame): void;
  close(nodeId: string, reason: string): void;
  emit(event: string, payload: unknown): void;
  role(): RoleInfo;
  /** Term and vote to disk (throws when it cannot: the frames after it must then not go out). */
  saveVote(vote: SavedVote): void;
}

export interface EffectsOutcome {
  /** Entries applied (since the last install, if any): what the saved log gets. */
  readonly applied: readonly IndexedEnvelope[];
  /** The entry or snapshot that could not be applied (the applies after it are skipped). */
  readonly failed: { readonly index: number; readonly reason: string } | null;
  readonly installed: boolean;
  /** Entries appended to the log by this step: the saved log gets them, then a group fsync. */
  readonly persist: readonly IndexedEnvelope[];
}

export function performEffects<S>(shell: EffectShell<S>, effects: readonly AgreementEffect[]): EffectsOutcome {
  let failed: { index: number; reason: string } | null = null;
  let installed = false;
  let voteUnsaved = false;
  const applied: IndexedEnvelope[] = [];
  const persist: IndexedEnvelope[] = [];
  for (const fx of effects) {
    switch (fx.kind) {
      case 'send':
        // A vote or vote request must never leave before the vote is on disk.
        if (!voteUnsaved) shell.send(fx.to, fx.frame);
        break;
      case 'save-vote':
        try {
          shell.saveVote(fx.vote);
        } catch (err) {
          voteUnsaved = true;
          shell.log.error('cannot save the vote; not sending it', { err });
        }
        break;
      case 'persist':
        persist.push(...fx.entries);
        break;
      case 'apply':
        if (failed) break;
        try {
          shell.setState(shell.replica.apply(shell.getState(), fx.entry));
          applied.push(fx.entry);
          shell.emit('applied', fx.entry);
        } catch (err) {
          failed = { index: fx.entry.index, reason: asTorusError(err).message };
          shell.log.error('could not apply entry', { index: fx.entry.index, err });
        }
        break;
      case 'install':
        try {
          const next = shell.replica.decode(fx.snapshot.state);
          if (shell.replica.digest(next) !== fx.snapshot.digest)
            throw new TorusError('TORUS_PROTOCOL_INVALID', 'snapshot digest mismatch');
          shell.setState(next);
          failed = null;
          installed = true;
          applied.length = 0;
          persist.length = 0;
          shell.emit('installed', { index: fx.snapshot.index, digest: fx.snapshot.digest });
        } catch (err) {
          failed = { index: fx.snapshot.index, reason: `snapshot refused: ${asTorusError(err).message}` };
        }
        break;
      case 'send-snapshot':
        shell.send(fx.to, {
          type: 'snapshot',
          term: fx.term,
          index: fx.index,
          lastTerm: fx.lastTerm,
          lastHash: fx.lastHash,
          digest: shell.replica.digest(shell.getState()),
          state: shell.replica.encode(shell.getState()),
        });
        break;
      case 'close':
        shell.close(fx.nodeId, fx.reason);
        break;
      case 'role':
        shell.log.info('role', { role: fx.role, term: fx.term, leader: fx.leader });
        shell.emit('role', { role: fx.role, term: fx.term, leader: fx.leader });
        break;
      case 'quorum':
        if (fx.quorum.ok) shell.log.info('quorum', { ...fx.quorum });
        else shell.log.warn('no quorum: not starting or keeping a term, writes are refused', { ...fx.quorum });
        shell.emit('quorum', { ...shell.role() });
        break;
      case 'warn':
        shell.log.warn(fx.msg, fx.fields);
        break;
    }
  }
  return { applied, failed, installed, persist };
}
