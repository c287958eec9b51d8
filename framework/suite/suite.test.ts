// The one test file every test-type project runs: each config under test_configs/<type>/ becomes
// one concurrent Vitest test, named by its id and tagged with its category.
import { afterAll, beforeAll, describe, inject, test } from 'vitest';
import type { RunnerTestSuite } from 'vitest';
import { readSettings } from '../settings.ts';
import { detectGpuType } from '../select/gpu.ts';
import { loadPlannedTest, planRun, type PlannedTest } from '../select/plan.ts';
import { discoverConfigs } from '../config/discover.ts';
import { describeUnknownIds, selectByTestList } from '../select/testlist.ts';
import { ConfigError } from '../config/issue.ts';
import { RunSession } from '../jobs/session.ts';
import { saveTestResult, testRecordOf } from '../results/save.ts';
import { historyForTest } from '../history/test-check.ts';
import { testTypeNames } from '../types/names.ts';
import { testType } from '../types/registry.ts';

const typeName = process.env.DISAGG_BENCH_TEST_TYPE;
if (!typeName) throw new Error('DISAGG_BENCH_TEST_TYPE is unset: run this file through a test-type project (vitest --project <type>)');

const settings = readSettings();
const gpu = await detectGpuType();
const plan = planRun({ settings, gpu, testType: typeName });
const knownTags = new Set(['perf', 'accuracy', 'stress']);
let session: RunSession | undefined;

/** Tests Vitest will actually run (after -t, --tags-filter, .only): only they form batches. */
function selectedIds(suite: Readonly<RunnerTestSuite>): Set<string> {
  return new Set(suite.tasks.filter((t) => t.mode === 'run' || t.mode === 'only').map((t) => t.name));
}

function runnable(t: PlannedTest): boolean {
  return t.issues.length === 0 && !t.skipReason;
}

/** Config files under test_configs/<not a test type>/ (those the test list selects, when there is one). */
function configsOfUnknownTypes() {
  const files = discoverConfigs(settings.workDir).files.filter((f) => !testType(f.testType));
  return plan.testList ? selectByTestList(files, plan.testList).selected : files;
}

describe(typeName, { concurrent: true }, () => {
  // Vitest requires the first (fixture) argument to be a destructuring pattern.
  // eslint-disable-next-line no-empty-pattern
  beforeAll(async ({}, suite) => {
    for (const notice of plan.notices) console.warn(notice);
    if (gpu.source === 'none') console.warn(`No GPU detected and GPU_TYPE unset (${gpu.detail}): only configs that need no GPU run.`);
    const selected = selectedIds(suite);
    const toRun = plan.tests.filter((t) => selected.has(t.id) && runnable(t));
    if (toRun.length === 0) return;
    session = await RunSession.open({ settings, gpu, runId: inject('runId') });
    await session.plan(toRun);
  });

  afterAll(async () => {
    await session?.close();
  });

  const defineTest = (planned: PlannedTest) => {
    const tags = knownTags.has(planned.category) ? [planned.category] : [];
    test(planned.id, { tags }, async (ctx) => {
      // Skip first: a config for another GPU is skipped, valid or not (as upstream does).
      if (planned.skipReason) return ctx.skip(planned.skipReason);
      if (planned.issues.length > 0) throw new ConfigError(planned.issues);
      const run = await session!.run(planned);
      // Interrupted: the job was cancelled under the test, which has no result to write.
      if (run.interrupted) throw new Error(`${planned.id}: ${run.interrupted}; no result recorded`);
      // RESUME: an earlier run recorded this job's result; writing it again would duplicate it.
      // The history's part: run context for the run's end, and the check against earlier runs.
      const history = run.alreadyRecorded ? undefined : await historyForTest({ settings, runId: inject('runId'), test: planned, record: testRecordOf({ settings, gpu, test: planned, run }) });
      for (const warning of history?.warnings ?? []) console.warn(warning);
      const saved = run.alreadyRecorded ? [] : await saveTestResult({ settings, gpu, test: planned, run, history }).catch((err: Error) => {
        // One error that says all: why the test failed (when it did) and why nothing of it was saved.
        const why = run.passed ? '' : `\n- ${run.failures.filter((f) => f !== err.message).join('\n- ')}`;
        throw new Error(`${planned.id}: its result could not be saved: ${err.message}${why.trim() === '-' ? '' : why}`);
      });
      ctx.task.meta.disagg = { jobId: run.jobId, state: run.status.state, metrics: run.metrics, files: saved };
      const earlier = run.alreadyRecorded ? ` (result of job ${run.jobId}, recorded by an earlier run)` : '';
      const failures = [...run.failures, ...(history?.failures ?? [])];
      if (failures.length > 0) {
        throw new Error(`${planned.id} failed${earlier}:\n- ${failures.join('\n- ')}`);
      }
    });
  };
  for (const planned of plan.tests.filter((t) => !t.skipReason)) defineTest(planned);
  // Skipped tests sit in a suite named by the reason, so `vitest list` shows why (test names,
  // hence ids, -t and test lists, are unchanged).
  const skipReasons = new Set(plan.tests.flatMap((t) => (t.skipReason ? [t.skipReason] : [])));
  for (const reason of skipReasons) {
    describe(`skipped: ${reason}`, () => {
      for (const planned of plan.tests.filter((t) => t.skipReason === reason)) defineTest(planned);
    });
  }

  // Listed ids that match no config of any type are reported once, by the project of their type
  // (or the first project when the id names no known type).
  const ownUnknown = plan.unknownListedIds.filter((u) => {
    const owner = testTypeNames.find((t) => u.id.startsWith(`${t}_`)) ?? testTypeNames[0];
    return owner === typeName;
  });
  if (ownUnknown.length > 0) {
    test(`test list ${plan.testList!.file}: unknown ids`, () => {
      throw new Error(describeUnknownIds(plan.testList!, ownUnknown));
    });
  }
  // Configs under a folder that names no test type belong to no project: the first project fails
  // each of them, so they cannot go unnoticed (`vitest --project bogus` only says "no such project").
  const unknownTypeConfigs = typeName === testTypeNames[0] ? configsOfUnknownTypes() : [];
  for (const file of unknownTypeConfigs) {
    test(file.displayFile, () => {
      throw new ConfigError(loadPlannedTest(file, gpu, process.env).issues);
    });
  }
  if (plan.tests.length === 0 && ownUnknown.length === 0 && unknownTypeConfigs.length === 0) {
    test.skip(`no configs under test_configs/${typeName}/`, () => {});
  }
});

declare module 'vitest' {
  export interface ProvidedContext {
    runId: string;
  }
  interface TaskMeta {
    disagg?: {
      jobId?: string;
      state: string;
      metrics: import('../metrics/metric.ts').Metric[];
      files: string[];
    };
  }
}
