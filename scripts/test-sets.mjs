// The two test sets, by a naming rule shared by scripts/unit-tests.mjs (which runs one of them) and
// scripts/tap-summary.mjs (which fails a run in which a lab-set file skipped where it must run).
// The lab set: every test under test/e2e/, test/lab/ and test/jepsen/ (real multi-node clusters) and every test
// whose file name contains "lab" (it builds a namespace lab or needs root). The unit set: the rest.
const LAB_DIRS = ['test/e2e', 'test/lab', 'test/jepsen'];

/** Whether a test file (a path relative to the repository, as tap names it) belongs to the lab set. */
export const isLabTest = (path) =>
  /lab/.test(path.split('/').at(-1)) || LAB_DIRS.some((dir) => path.startsWith(`${dir}/`));

/**
 * Whether this run must run every lab-set test: as root (the lab can be built) or with TORUS_REQUIRE_LAB=1 (CI
 * sets it). There a skip is a failure; elsewhere a lab test may skip with its reason.
 */
export const labRequired = () => process.getuid?.() === 0 || process.env.TORUS_REQUIRE_LAB === '1';
