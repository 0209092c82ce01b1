export { Lab, type LabHost, type LinkTarget } from './lab.js';
export { LAB_PREFIX, parseRate, planLab, tbfBurstBytes, type LabOptions, type LinkSpec, type LabPlan } from './plan.js';
export { sweepStaleLabs } from './cleanup.js';
export { withLab, type LabTestContext } from './with-lab.js';
export { listNetns } from './sh.js';
