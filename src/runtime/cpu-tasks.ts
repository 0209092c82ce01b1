/**
 * CPU-heavy pure functions actors may hand to the shared piscina pool, by name.
 * Each entry: task name → module (relative to this file, without extension) whose default export is
 * `(input: unknown) => unknown | Promise<unknown>`. Add one line per task. The compiler and the folder rules do not
 * follow these strings: test/runtime/cpu-tasks.test.ts resolves each one and cruises it under the folder rules.
 */
export const CPU_TASKS: Readonly<Record<string, string>> = {
  'runtime.echo': './cpu-task-echo',
  'placement.plan': '../actors/placement-planner/pool-task',
  'artifacts.sha256': '../artifacts/hash-task',
  'device.measure': '../native/device-speed-task',
};
