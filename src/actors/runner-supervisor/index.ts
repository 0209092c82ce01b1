/**
 * `torus/actors/runner-supervisor`: the runner supervisor for embedders — its statechart and pure reactions,
 * the message decoder, the worker module to supervise, and the RunnerManager to use runners without the actor.
 */
import { siblingModule } from '../../runtime/module-url.js';

export {
  runnerSupervisorMachine,
  type SupervisorContext,
  type SupervisorEvent,
  type RunnerSummary,
} from './supervisor/machine.js';
export { reactToEvent, reactToState, toRunnerInstance, type SupervisorEffect } from './supervisor/reactions.js';
export { decodeSupervisorMessage } from './supervisor/messages.js';
export { decodeStateView, type StateView } from './supervisor/state-view.js';
export { RunnerManager } from './supervisor/runner-manager.js';
export type { RunnerManagerOptions, ManagerEvent } from './supervisor/runner-manager-options.js';
export type { TaskSpec } from './supervisor/local-runner.js';
export {
  RunnerProcess,
  DEFAULT_DEADLINES,
  type ShutdownDeadlines,
  type RunnerExit,
} from './supervisor/runner-process.js';
export { execEnv, ringHosts } from './supervisor/exec-env.js';
export type { RunnerInstance, Workload } from '../../protocols/runner-instance.js';

/** The worker entry to pass to `runtime.supervise({ name: 'runner-supervisor', module, options })`. */
export const runnerSupervisorModule: URL = siblingModule(import.meta.url, './worker');
