/** The ring collective engine: `const comm = await RingCommunicator.connect({ rank, hosts }); await comm.allReduce(buf)`. */
export { RingCommunicator } from './communicator.js';
export type { RingContext } from './context.js';
export type { RingConnectOptions } from './options.js';
export type { RingHost } from './peer-links.js';
export { DTYPES, REDUCE_OPS, dtypeOf, type Dtype, type ReduceOp, type RingArray } from '../native/kernels/dtypes.js';
export { halfToNumber, numberToHalf } from '../native/kernels/float16.js';
