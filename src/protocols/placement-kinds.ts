/** How a placement splits a model and which collective backend its runners use: the one list of each. */
export const SHARDINGS = ['pipeline', 'tensor'] as const;
export type Sharding = (typeof SHARDINGS)[number];

export const BACKENDS = ['ring', 'jaccl'] as const;
export type Backend = (typeof BACKENDS)[number];
