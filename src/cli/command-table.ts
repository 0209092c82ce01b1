/**
 * Every command a user can type after `torus`, with the line `--help` shows for it. main.ts dispatches on exactly
 * these names (its table is typed by them), so a command cannot be runnable and missing from the help.
 */
export const COMMAND_LIST = [
  { name: 'start', summary: 'run a node (the default when no command is given)' },
  { name: 'plan', summary: 'plan a placement offline from a state and a request file' },
  { name: 'status', summary: "a running node's identity, role, quorum and nodes" },
  { name: 'place', summary: 'place a workload and start its runners' },
  { name: 'run', summary: 'run a command as an exec job on the cluster and stream its output' },
  { name: 'instances', summary: 'list instances, or one instance with its runners' },
  { name: 'delete', summary: 'stop and remove an instance' },
  { name: 'peers', summary: 'nodes heard but not joined, and why' },
  { name: 'measure', summary: "re-measure this node's links now" },
  { name: 'calibrate', summary: 'measure what a framework (torch) achieves on each node, for the planner' },
  {
    name: 'bench',
    summary:
      'bench ring: the ring collective benchmark (a lab on this machine, or --live); bench pipeline: measured vs predicted',
  },
  { name: 'token', summary: 'print the API token or a join command' },
  { name: 'members', summary: 'members remove ID: remove dead members so a quorum can be had again' },
  { name: 'artifacts', summary: 'add, list, fetch, broadcast and remove artifacts (model files) on the cluster' },
] as const;

export type CommandName = (typeof COMMAND_LIST)[number]['name'];

/** The commands section of `--help`. */
export function commandsHelp(): string {
  const width = Math.max(...COMMAND_LIST.map((c) => c.name.length));
  return ['Commands (each with --help):', ...COMMAND_LIST.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`)].join(
    '\n',
  );
}
