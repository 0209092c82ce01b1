export * from './dtypes.js';
export { KernelMemory, type Region } from './kernel-memory.js';
export { createReducer, reduceArrays, reduceHalf, type Reducer } from './reducer.js';
export { float32ToHalf, halfToNumber, numberToHalf } from './float16.js';
