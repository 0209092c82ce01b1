export { Runtime, type RuntimeOptions, type RemoteTransport, type ServiceHandler } from './runtime.js';
export { serveActor, type ActorDefinition, type ActorContext, type RequestHandler } from './serve-actor.js';
export type { ActorSpec } from './actor-host.js';
export {
  backoffDelayMs,
  decideRestart,
  decideRestartInRow,
  DEFAULT_RESTART_POLICY,
  RUNNER_RESTART_POLICY,
  type RestartPolicy,
  type RestartDecision,
  type InRowDecision,
} from './restart-policy.js';
export {
  exposeRuntime,
  connectRuntime,
  runtimeApi,
  type ActorHandle,
  type RemoteNode,
  type RuntimeApi,
} from './facade.js';
export { CpuPool } from './cpu-pool.js';
export { createLogger, setLogLevel, type Logger, type LogLevel } from './log.js';
export { siblingModule, childExecArgv } from './module-url.js';
