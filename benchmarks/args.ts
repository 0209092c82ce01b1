/** The command line of a benchmark script: `--name value` or `--name=value` (the form `npm run bench -- x --size=64` passes through). */
export const args = process.argv.slice(2);

export function flag(name: string): string | undefined {
  const eq = args.find((a) => a.startsWith(`${name}=`));
  if (eq) return eq.slice(name.length + 1);
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
