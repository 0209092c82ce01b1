import { backtrackHamiltonian } from './backtrack.js';
import type { Rng } from './rng.js';

/**
 * Finds a Hamiltonian cycle in an undirected graph (adjacency lists). Dense graphs: Pósa's rotation–extension heuristic:
 * grow a path from its end, preferring the unvisited neighbour with the fewest unvisited neighbours left
 * (Warnsdorff), and when stuck rotate the path at a neighbour of the end. Restarts from a random vertex when a
 * restart's step budget runs out. Bounded by `maxSteps` (a step count, never a clock, so results are
 * deterministic for a given RNG). Returns the cycle as a vertex order, or undefined if none was found (which
 * does not prove that none exists).
 */
export function findHamiltonianCycle(
  adj: readonly (readonly number[])[],
  rng: Rng,
  maxSteps: number,
): number[] | undefined {
  const n = adj.length;
  if (n >= 3) {
    for (const list of adj) if (list.length < 2) return undefined;
    if (!connected(adj)) return undefined;
  }
  // Sparse graphs (average degree ≤ 6): depth-first search with pruning first, rotations with what is left.
  // Dense graphs: rotations, then a short depth-first try (rotations almost always settle dense cases).
  const edges = adj.reduce((s, list) => s + list.length, 0);
  if (n >= 3 && edges <= 6 * n) {
    return backtrackHamiltonian(adj, Math.floor(maxSteps / 2)) ?? rotationSearch(adj, rng, Math.ceil(maxSteps / 2));
  }
  return (
    rotationSearch(adj, rng, maxSteps) ?? (n >= 3 ? backtrackHamiltonian(adj, Math.min(n * n, maxSteps)) : undefined)
  );
}

/** Pósa rotation–extension with Warnsdorff extension and random restarts. */
function rotationSearch(adj: readonly (readonly number[])[], rng: Rng, maxSteps: number): number[] | undefined {
  const n = adj.length;
  if (n === 0) return undefined;
  if (n === 1) return [0];
  if (n === 2) return adj[0]?.includes(1) ? [0, 1] : undefined;

  const neighbour = new Uint8Array(n * n);
  adj.forEach((list, v) =>
    list.forEach((u) => {
      neighbour[v * n + u] = 1;
    }),
  );
  const path = new Int32Array(n);
  const pos = new Int32Array(n);
  const free = new Int32Array(n);
  const perRestart = Math.max(4 * n * n, 200);
  let steps = 0;

  while (steps < maxSteps) {
    pos.fill(-1);
    adj.forEach((list, v) => {
      free[v] = list.length;
    });
    let len = 0;
    const visit = (v: number): void => {
      path[len] = v;
      pos[v] = len;
      len++;
      for (const u of adj[v] as readonly number[]) free[u] = (free[u] as number) - 1;
    };
    visit(rng.int(0, n - 1));
    const limit = Math.min(maxSteps, steps + perRestart);
    while (steps < limit) {
      steps++;
      const end = path[len - 1] as number;
      if (len === n && neighbour[end * n + (path[0] as number)] === 1) return Array.from(path);
      const list = adj[end] as readonly number[];
      // Extension: the unvisited neighbour with the fewest unvisited neighbours; random among ties.
      let pick = -1,
        best = Number.POSITIVE_INFINITY,
        ties = 0;
      for (const u of list) {
        if (pos[u] !== -1) continue;
        const f = free[u] as number;
        if (f < best) {
          best = f;
          pick = u;
          ties = 1;
        } else if (f === best && rng.int(0, ties++) === 0) pick = u;
      }
      if (pick !== -1) {
        visit(pick);
        continue;
      }
      // Rotation: pick a path neighbour v of the end (not its predecessor), reverse the part after v.
      const start = rng.int(0, list.length - 1);
      let v = -1;
      for (let i = 0; i < list.length; i++) {
        const u = list[(start + i) % list.length] as number;
        if ((pos[u] as number) < len - 2) {
          v = u;
          break;
        }
      }
      if (v === -1) break; // cannot rotate: restart
      let i = (pos[v] as number) + 1,
        j = len - 1;
      while (i < j) {
        const a = path[i] as number,
          b = path[j] as number;
        path[i] = b;
        pos[b] = i;
        path[j] = a;
        pos[a] = j;
        i++;
        j--;
      }
    }
  }
  return undefined;
}

function connected(adj: readonly (readonly number[])[]): boolean {
  const seen = new Uint8Array(adj.length);
  const stack = [0];
  seen[0] = 1;
  let count = 1;
  while (stack.length > 0) {
    const v = stack.pop() as number;
    for (const u of adj[v] as readonly number[])
      if (seen[u] === 0) {
        seen[u] = 1;
        count++;
        stack.push(u);
      }
  }
  return count === adj.length;
}
