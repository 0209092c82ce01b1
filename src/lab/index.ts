export { Lab, type LabHost, type LinkTarget } from './lab.js';
export {
  LAB_PREFIX,
  parseRate,
  planLab,
  tbfArgs,
  tbfBurstBytes,
  type LabOptions,
  type LinkSpec,
  type LabPlan,
} from './plan.js';
export { sweepStaleLabs } from './cleanup.js';
export { withLab, type LabTestContext } from './with-lab.js';
export { listNetns } from './sh.js';
export { API_PORT, MAIN, NodeProcess, nodeUnavailableReason } from './node-process.js';
export { NodeCluster, profiled, type ClusterOptions, type ClusterTest, type NodeView } from './node-cluster.js';
export { BenchOwner } from './bench-owner.js';
