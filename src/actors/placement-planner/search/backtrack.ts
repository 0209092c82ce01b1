/**
 * Depth-first Hamiltonian cycle search for sparse graphs, where rotation heuristics struggle (a vertex of degree
 * two forces both its hops). Extends a path from vertex 0, trying the neighbour with the fewest unvisited
 * neighbours first, and prunes a branch as soon as some unvisited vertex is left with fewer than two ways in
 * and out. Bounded by `maxSteps` extensions; undefined means not found within the budget (or none exists).
 */
export function backtrackHamiltonian(adj: readonly (readonly number[])[], maxSteps: number): number[] | undefined {
  const n = adj.length;
  const start = 0;
  const neighbour = new Uint8Array(n * n);
  adj.forEach((list, v) =>
    list.forEach((u) => {
      neighbour[v * n + u] = 1;
    }),
  );
  const visited = new Uint8Array(n);
  const free = Int32Array.from(adj, (list) => list.length);
  const path: number[] = [];
  let steps = 0;

  const enter = (v: number): void => {
    visited[v] = 1;
    path.push(v);
    for (const u of adj[v] as readonly number[]) free[u] = (free[u] as number) - 1;
  };
  const leave = (v: number): void => {
    visited[v] = 0;
    path.pop();
    for (const u of adj[v] as readonly number[]) free[u] = (free[u] as number) + 1;
  };
  /** Every unvisited vertex still needs two ways: unvisited neighbours, or the path's two ends. */
  const viable = (end: number): boolean => {
    for (let u = 0; u < n; u++) {
      if (visited[u]) continue;
      const ways = (free[u] as number) + (neighbour[u * n + end] as number) + (neighbour[u * n + start] as number);
      if (ways < 2) return false;
    }
    return true;
  };
  const extend = (end: number): boolean => {
    if (path.length === n) return neighbour[end * n + start] === 1;
    if (++steps > maxSteps || !viable(end)) return false;
    const next = (adj[end] as readonly number[])
      .filter((u) => !visited[u])
      .sort((a, b) => (free[a] as number) - (free[b] as number) || a - b);
    for (const u of next) {
      enter(u);
      if (extend(u)) return true;
      leave(u);
      if (steps > maxSteps) return false;
    }
    return false;
  };
  enter(start);
  return extend(start) ? path : undefined;
}
