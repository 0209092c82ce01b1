/** torus as a library: start a node (or a subset of its actors) inside your own program. */
export { startNode, type TorusNode, type StartOptions } from './node/start-node.js';
export { parseNodeArgs, NODE_USAGE, DEFAULT_PORT, type NodeConfig } from './node/config.js';
export { ACTOR_NAMES, type ActorName } from './node/actor-specs.js';
export * from './runtime/index.js';
export { TorusError, ValidationError, ClosedResourceError, ERROR_STATUS, type ErrorCode } from './protocols/errors.js';
