// Projects: `unit` is the project's own test suite; every other project is one test type, whose
// tests are the YAML configs under test_configs/<type>/ (all run by framework/suite/suite.test.ts).
import { defineConfig } from 'vitest/config';
import { testTypeNames } from './framework/types/names.ts';
import SlowestFirstSequencer from './tests/setup/sequencer.ts';
import { runsTestTypes, watchLauncherOnce } from './framework/suite/run-ending.ts';

// A run of test-type projects watches the npx that started it from here, Vitest's first read of
// the project, not from the global setup: a SIGTERM to npx before the global setup ran would
// otherwise leave Vitest orphaned, submitting and running every job (framework/suite/run-ending.ts).
if (runsTestTypes()) watchLauncherOnce();

const suite = 'framework/suite/suite.test.ts';

/**
 * How many test files run at once (DISAGG_TEST_WORKERS, default 4). Much of the suite waits on
 * SLURM jobs, child runs of the suite and stand-in servers rather than computing, so files overlap
 * well even on 2 CPUs (4 at once kept 1.3 of them busy on average: bench/results/
 * suite-durations-2026-11-27-after.txt); Vitest's own default (CPUs - 1) runs them one after
 * another there. Files that share a resource take their own (faults-cluster.ts: a cluster per
 * worker; free ports).
 */
function testWorkers(raw = process.env.DISAGG_TEST_WORKERS): number {
  if (raw === undefined || raw.trim() === '') return 4;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1 && n <= 64) return n;
  // One line, not the config loader's stack trace.
  console.error(`vitest.config.ts: DISAGG_TEST_WORKERS=${JSON.stringify(raw)}: expected a whole number of test files to run at once, 1 to 64 (default 4)`);
  process.exit(2);
}

export default defineConfig({
  test: {
    reporters: ['default', './framework/suite/reporter.ts'],
    // One value for every project: Vitest refuses projects of one group with different counts.
    maxWorkers: testWorkers(),
    // Slowest files first, from Vitest's cache or, on a fresh clone, the committed duration tables.
    sequence: { sequencer: SlowestFirstSequencer },
    // The unit project's global teardown stops the cluster it started and waits for the run's
    // processes to end (tests/setup/global-setup.ts); Vitest's default 10 s would cut it short.
    teardownTimeout: 300_000, // the cluster's `down` (up to 180 s) and the leak check's grace (30 s)
    tags: [
      { name: 'perf', description: 'Performance tests (test_configs/<type>/perf).' },
      { name: 'accuracy', description: 'Accuracy tests (test_configs/<type>/accuracy).' },
      { name: 'stress', description: 'Stress tests (test_configs/<type>/stress).' },
    ],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/**/*.test.ts'],
          globalSetup: ['tests/setup/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      ...testTypeNames.map((type) => ({
        extends: true as const,
        test: {
          name: type,
          include: [suite],
          env: { DISAGG_BENCH_TEST_TYPE: type },
          globalSetup: ['framework/suite/global-setup.ts'],
          // A test waits on its job; the job manager owns the real timeout and cancels on expiry.
          testTimeout: 0,
          // Every config's test waits on its job at once; the batch manager limits what runs.
          maxConcurrency: 100_000,
          hookTimeout: 600_000,
        },
      })),
    ],
  },
});
