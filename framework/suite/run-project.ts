// What kind of Vitest process and project this is, read from the command line and the project's
// config alone: the global setup and the reporter ask it at every start, `vitest list` included,
// so it imports nothing (the run's state, its ledger and results load only where a run needs them).

/**
 * Only the config tests of test-type projects count (not the project's own unit tests): a
 * test-type project, a built-in type's or an extension's, is the one vitest.config.ts gives its
 * type's name in DISAGG_BENCH_TEST_TYPE (read from the project, so no registry need be loaded here).
 */
export function isRunProject(project: { name: string; config: { env?: Record<string, unknown> } }): boolean {
  return project.config.env?.DISAGG_BENCH_TEST_TYPE === project.name;
}

/**
 * Whether this process is Vitest's `list` command: it collects the tests without running any, so
 * none of them is unfinished or "not run" (its tests stay pending by design), no job is submitted
 * and nothing is written to OUTPUT_PATH.
 */
export function isListing(argv: readonly string[] = process.argv): boolean {
  return /vitest(\.mjs)?$/.test(argv[1] ?? '') && argv[2] === 'list';
}
