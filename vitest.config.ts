// Projects: `unit` is the project's own test suite; every other project is one test type, whose
// tests are the YAML configs under test_configs/<type>/ (all run by framework/suite/suite.test.ts).
import { defineConfig } from 'vitest/config';
import { testTypeNames } from './framework/types/names.ts';

const suite = 'framework/suite/suite.test.ts';

export default defineConfig({
  test: {
    reporters: ['default', './framework/suite/reporter.ts'],
    // The unit project's global teardown stops the cluster it started and waits for the run's
    // processes to end (tests/setup/global-setup.ts); Vitest's default 10 s would cut it short.
    teardownTimeout: 180_000,
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
