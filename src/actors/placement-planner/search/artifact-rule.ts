/**
 * exo's "prefer the nodes that already hold the files" rule on real holdings (docs/artifacts.md): a node's
 * `cached` fraction of a workload is the fraction of its artifacts' bytes it holds (the shell computes it from
 * the replicated state, src/actors/placement-planner/leader/artifact-placement.ts), and the preference order already favours more
 * cached. This adds what the explanation says: how many bytes each candidate set would have to move, i.e. for
 * every node of the set the part of the artifacts it lacks.
 */
export function artifactBytesToMove(
  artifactBytes: number | undefined,
  cached: readonly number[],
): ((members: readonly number[]) => number) | undefined {
  if (artifactBytes === undefined) return undefined;
  return (members) => Math.round(members.reduce((s, m) => s + (1 - Math.min(1, cached[m] ?? 0)) * artifactBytes, 0));
}

export function artifactWhy(
  artifactBytes: number | undefined,
  cached: readonly number[],
  members: readonly number[],
  ids: readonly string[],
): string | undefined {
  const moved = artifactBytesToMove(artifactBytes, cached);
  if (!moved || artifactBytes === undefined) return undefined;
  const per = members.map((m) => `${ids[m]} ${Math.round((1 - Math.min(1, cached[m] ?? 0)) * artifactBytes)}`);
  return `artifacts: ${moved(members)} of ${artifactBytes} bytes per node to move to this set (${per.join(', ')})`;
}
