/**
 * The lab tests' cluster of real nodes: the lab library's NodeCluster (src/lab/node-cluster.ts, shared with the lab
 * benchmarks) under the names the tests use.
 */
export {
  API_PORT,
  MAIN,
  NodeProcess as E2eNode,
  nodeUnavailableReason as e2eUnavailableReason,
} from '../../src/lab/node-process.js';
export {
  NodeCluster as E2eCluster,
  type ClusterOptions,
  type ClusterTest as E2eTest,
  type NodeView,
} from '../../src/lab/node-cluster.js';
