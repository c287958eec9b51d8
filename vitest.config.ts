// Projects: every test type is one project, whose tests are the YAML configs under
// test_configs/<type>/ (all run by framework/suite/suite.test.ts). The project's own test suite is
// two more: `unit` (logic alone: no root, no cluster, no network, no child runs; seconds, `npm run
// test:unit`) and `cluster` (everything else: the real local SLURM cluster, which its global setup
// brings up, etcd, PostgreSQL, Chromium, UCX, child runs of the suite). `npm test` runs both.
// This file names test files only as paths: it imports nothing from tests/.
import { configDefaults, defineConfig } from 'vitest/config';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { allTestTypeNames } from './framework/contract/extension-types.ts';
import SlowestFirstSequencer from './scripts/test-sequencer.ts';
import { runsTestTypes, watchLauncherOnce } from './framework/suite/cancellation.ts';
import { isListing } from './framework/suite/run-project.ts';

// A run of test-type projects watches the npx that started it from here, Vitest's first read of
// the project, not from the global setup: a SIGTERM to npx before the global setup ran would
// otherwise leave Vitest orphaned, submitting and running every job (framework/suite/cancellation.ts).
if (runsTestTypes()) watchLauncherOnce();

/**
 * The `unit` project's files: each runs in-process, needs nothing this host must provide, and takes
 * at most a few seconds. A new test file is a `cluster` test until it is listed here
 * (docs/testing.md says how to tell).
 */
const UNIT_TESTS = [
  'tests/bench/{command-lines,help,side-runs-placement,ucx-perftest-final}.test.ts',
  'tests/cli/read-args.test.ts',
  'tests/common/{hostlist,serving-format,size,speaks-for-itself,yaml-load}.test.ts',
  'tests/config/{discover,file-stamp,ids,parse-cache,resolve}.test.ts',
  'tests/history/{baseline,bisect-search,bisect-statistics,gate-family,gate-judge,regression-config}.test.ts',
  'tests/jobs/{batch-manager,judge-unit,resume-unit,session-unit}.test.ts',
  'tests/lint/*.test.ts',
  'tests/llamacpp/gguf.test.ts',
  'tests/metrics/**/*.test.ts',
  'tests/nixl/kvbench-commands.test.ts',
  'tests/results/{digest-gate,json,progress,report-command,report-plots,report,test-states,test-timing}.test.ts',
  'tests/scheduler/{gridengine-status,launchers,local-env,registry,slurm-status,states,watcher}.test.ts',
  'tests/select/{gpu-skip,gpu,plan-cache,planned-state}.test.ts',
  'tests/run/profile-words.test.ts',
  'tests/setup/sequencer.test.ts',
  'tests/suite/{cancel-runner,run-tests}.test.ts',
  'tests/trtllm/serve-bench/{options,prompts,sse-lines,statistics}.test.ts',
  'tests/trtllm/upstream-shapes.test.ts',
  'tests/types/{llamacpp-rules,module-boundaries,nixl-gpu-placement,nixl-node-fit,registry,serving-metrics,serving-overrides,serving-rules}.test.ts',
  'tests/types/{nixl,serving}/job/job-script-golden.test.ts',
  'tests/xfer/{bench-reports,cuda-copies,cuda-copy-options,cuda-gate,device-copy,matgen,matrix,pattern-buffers,pattern-memory,rank,traffic-pattern,ucx-options}.test.ts',
  'tests/xfer/benches/{ep,kvpipe,sweep-nixlbench-flags}.test.ts',
];

const suite = 'framework/suite/suite.test.ts';

/**
 * Every test type is a project: the built-in ones, and those the extensions named in
 * WORK_DIR/disagg-bench.yaml register (framework/config/extensions.ts), loaded only when the file is
 * there. Vite bundles this file with everything it imports, dynamic imports included, and parses
 * each module of the bundle at every start: the extension machinery (~40 modules) is therefore
 * loaded through tsx when needed, never imported here (a start without the file pays nothing for
 * it: bench/startup.ts).
 */
async function testTypeProjects(): Promise<string[]> {
  const workDir = process.env.WORK_DIR || fileURLToPath(new URL('.', import.meta.url));
  if (!existsSync(path.join(workDir, 'disagg-bench.yaml'))) return allTestTypeNames();
  const { tsImport } = await import('tsx/esm/api');
  const names: typeof import('./framework/config/extension-type-names.ts') = await tsImport('./framework/config/extension-type-names.ts', import.meta.url);
  return names.testTypeNamesWithExtensions(workDir);
}

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

/**
 * What every project shares with the root, given to each project here. Not through `extends: true`:
 * Vite would then load this file again, bundled and checked, once per project (five more loads at
 * every start, `vitest list --project disagg` included: bench/startup.ts), for options that are
 * all here.
 */
const shared = {
  // Transformed modules kept between runs in node_modules/.experimental-vitest-cache (keyed by each
  // file's content and the config): a run or a listing pays Vitest's transform of the framework
  // once, not at every start (bench/startup.ts); the unit project's ~75 files likewise
  // (bench/unit-project.ts). The cluster project's tests stay on the default.
  experimental: { fsModuleCache: true },
  // One value for every project: Vitest refuses projects of one group with different counts.
  maxWorkers: testWorkers(),
  // Slowest files first, from Vitest's cache or, on a fresh clone, the committed duration tables.
  sequence: { sequencer: SlowestFirstSequencer },
  // The cluster project's global teardown stops the cluster it started and waits for the run's
  // processes to end (tests/setup/global-setup.ts); Vitest's default 10 s would cut it short.
  teardownTimeout: 300_000, // the cluster's `down` (up to 180 s) and the leak check's grace (30 s)
  tags: [
    { name: 'perf', description: 'Performance tests (test_configs/<type>/perf).' },
    { name: 'accuracy', description: 'Accuracy tests (test_configs/<type>/accuracy).' },
    { name: 'stress', description: 'Stress tests (test_configs/<type>/stress).' },
  ],
};

export default defineConfig({
  test: {
    reporters: ['default', './framework/suite/reporter.ts'],
    ...shared,
    projects: [
      {
        // Limits for a loaded machine, where a file can wait minutes for a CPU: a test decides from
        // what it recorded, never from how fast the machine is.
        test: { ...shared, name: 'unit', include: UNIT_TESTS, testTimeout: 120_000, hookTimeout: 120_000 },
      },
      {
        test: {
          ...shared,
          name: 'cluster',
          include: ['tests/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT_TESTS],
          experimental: { fsModuleCache: false },
          globalSetup: ['tests/setup/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      ...(await testTypeProjects()).map((type) => ({
        test: {
          ...shared,
          name: type,
          include: [suite],
          env: { DISAGG_BENCH_TEST_TYPE: type },
          globalSetup: ['framework/suite/global-setup.ts'],
          // Vitest's runner, which also tells a worker's session when Vitest cancels the run.
          runner: 'framework/suite/cancel-runner.ts',
          // A run's workers are processes (Vitest's default): each cancels its own jobs on a signal,
          // and end-workers.ts finds and ends them under /proc. `vitest list` submits nothing and
          // only collects: its worker is a thread, which starts ~0.1 s sooner (bench/startup.ts).
          pool: isListing() ? 'threads' : 'forks',
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
