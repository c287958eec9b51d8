// The one test file every test-type project runs: each config under test_configs/<type>/ becomes
// one concurrent Vitest test, named by its id and tagged with its category.
import { afterAll, beforeAll, describe, inject, test } from 'vitest';
import type { RunnerTestSuite } from 'vitest';
import { readSettings } from '../settings.ts';
import { detectGpuType, gpuNotice } from '../select/gpu.ts';
import { loadPlannedTest, planRun, type PlannedTest } from '../select/plan.ts';
import { describeUnknownIds, selectByTestList } from '../select/testlist.ts';
import { ConfigError } from '../config/issue.ts';
import type { RunSession } from '../jobs/session.ts';
import { onVitestCancel } from './cancel-runner.ts';
import { allTestTypeNames } from '../contract/extension-types.ts';
import { isTestTypeName, testType } from '../types/registry.ts';
import { FailureError, InputError, UsageError } from '../../runners/common/errors.ts';
import { loadExtensions } from '../config/extensions.ts';

const typeName = process.env.DISAGG_BENCH_TEST_TYPE;
if (!typeName) throw new UsageError('DISAGG_BENCH_TEST_TYPE is unset: run this file through a test-type project (vitest --project <type>)');

const settings = readSettings();
// WORK_DIR's extensions (their schedulers, launchers, extractors), before anything asks a registry.
await loadExtensions(settings.workDir);
// GPU_TYPE, else asked of SLURM, else of NVML; the schedulers' modules load only to ask SLURM.
const schedulers = process.env.GPU_TYPE ? undefined : await import('../scheduler/create.ts');
const gpu = await detectGpuType(process.env, undefined, schedulers?.slurmGpuProbe(settings), { jobsRunHere: schedulers?.jobsRunHere(settings) });
const plan = planRun({ settings, gpu, testType: typeName });
const knownTags = new Set(['perf', 'accuracy', 'stress']);
let session: RunSession | undefined;
/** Stops hearing Vitest's cancel at the session's close. */
let stopHearingCancel = () => {};
/** The records of the selected tests that get no job (invalid, skipped): the write's failure, if any. */
let noJobRecords: Promise<string | undefined> = Promise.resolve(undefined);

/**
 * What only running a test needs, loaded at the first beforeAll: `vitest list` collects the tests
 * without running a hook, so a listing never pays for it. The jobs layer (~60 modules) comes first,
 * since the first submission waits on it; what only a test's end needs (saving its result, the
 * history's check: ~25 modules more) loads while the first jobs run (RESULTS_PRELOAD_MS), or
 * earlier when a test has no job and its record is written at once.
 */
const jobModules = () => import('../jobs/session.ts');
const resultModules = () =>
  Promise.all([import('../jobs/save-result.ts'), import('../history/test-check.ts')]).then(
    ([{ saveNoJobRecords, saveTestResult, testRecordOf }, { historyForTest }]) => ({ saveNoJobRecords, saveTestResult, testRecordOf, historyForTest }),
  );
let loadedResultModules: ReturnType<typeof resultModules> | undefined;
const forResults = () => (loadedResultModules ??= resultModules());
const RESULTS_PRELOAD_MS = 1_000;

/** Tests Vitest will actually run (after -t, --tags-filter, .only), skipped ones (in their own suites) included. */
function selectedIds(suite: Readonly<RunnerTestSuite>): Set<string> {
  const ids = new Set<string>();
  for (const task of suite.tasks) {
    if (task.type === 'suite') for (const id of selectedIds(task)) ids.add(id);
    else if (task.mode === 'run' || task.mode === 'only') ids.add(task.name);
  }
  return ids;
}

function runnable(t: PlannedTest): boolean {
  return t.issues.length === 0 && !t.skipReason;
}

/** Config files under test_configs/<not a test type>/ (those the test list selects, when there is one). */
function configsOfUnknownTypes() {
  const files = plan.discovered.filter((f) => !isTestTypeName(f.testType));
  return plan.testList ? selectByTestList(files, plan.testList).selected : files;
}

/** One line when the test list names configs of test types this invocation does not run (`--project`). */
function listedTestsOfOtherProjects(runProjects: readonly string[]): string | undefined {
  if (!plan.testList) return undefined;
  const listed = selectByTestList(plan.discovered, plan.testList).selected;
  const counts = new Map<string, number>();
  for (const f of listed) if (isTestTypeName(f.testType) && !runProjects.includes(f.testType)) counts.set(f.testType, (counts.get(f.testType) ?? 0) + 1);
  if (counts.size === 0) return undefined;
  const which = [...counts].map(([type, n]) => `${n} ${type}`).join(', ');
  return `test list ${plan.testList.file}: ${which} test(s) it names are not run by this invocation (run them with --project ${[...counts.keys()].join(' --project ')})`;
}

/** Tests this project runs: the regression gate judges each against estimates from all of them. */
let runTests = 1;
let runTestIds: string[] = [];

describe(typeName, { concurrent: true }, () => {
  // Vitest requires the first (fixture) argument to be a destructuring pattern.
  // eslint-disable-next-line no-empty-pattern
  beforeAll(async ({}, suite) => {
    for (const notice of plan.notices) console.warn(notice);
    const notice = gpuNotice(gpu, typeName, testType(typeName)?.assumedGpuType);
    if (notice) console.warn(notice);
    const selected = selectedIds(suite);
    // Every test has a record: those that get no job have theirs now, in one write.
    const noJob = plan.tests.filter((t) => selected.has(t.id) && !runnable(t));
    if (noJob.length > 0) noJobRecords = forResults().then(({ saveNoJobRecords }) => saveNoJobRecords(settings, gpu, noJob)).then(() => undefined, (err: Error) => err.message);
    const toRun = plan.tests.filter((t) => selected.has(t.id) && runnable(t));
    runTests = toRun.length;
    runTestIds = toRun.map((t) => t.id);
    if (toRun.length === 0) return;
    const { RunSession } = await jobModules();
    session = await RunSession.open({ settings, gpu, runId: inject('runId') });
    const own = session;
    stopHearingCancel = onVitestCancel((why) => own.interrupt(why));
    await session.plan(toRun);
    setTimeout(() => void forResults().catch(() => undefined), RESULTS_PRELOAD_MS).unref(); // a failure shows where they are used
  });

  afterAll(async () => {
    stopHearingCancel();
    await session?.close();
  });

  /** A test without a job fails when its record could not be written (results.json keeps every test). */
  const recordedWithoutJob = async (planned: PlannedTest) => {
    const failure = await noJobRecords;
    if (!failure) return;
    if (planned.skipReason) throw new FailureError(`${planned.id}: skipped (${planned.skipReason}), and its record could not be written: ${failure}`);
    throw new FailureError(`${planned.id}: its record could not be written: ${failure}; the config's issues:\n${new ConfigError(planned.issues).message}`);
  };

  const defineTest = (planned: PlannedTest) => {
    const tags = knownTags.has(planned.category) ? [planned.category] : [];
    test(planned.id, { tags }, async (ctx) => {
      // Skip first: a config for another GPU is skipped, valid or not (as upstream does).
      if (planned.skipReason) {
        await recordedWithoutJob(planned);
        return ctx.skip(planned.skipReason);
      }
      if (planned.issues.length > 0) {
        await recordedWithoutJob(planned);
        throw new ConfigError(planned.issues);
      }
      const run = await session!.run(planned);
      const { historyForTest, saveTestResult, testRecordOf } = await forResults();
      // Interrupted (the job was cancelled under the test), or held by another run on this
      // OUTPUT_PATH (whose records are the test's): not run to its end, no result to write.
      const notRun = run.interrupted ?? run.notRun;
      if (notRun) {
        ctx.task.meta.disagg = { jobId: run.jobId, state: run.interrupted ? 'CANCELLED' : 'NOT SUBMITTED', metrics: [], files: [], notRun };
        throw new FailureError(`${planned.id}: not run: ${notRun}; no result recorded`);
      }
      // RESUME: an earlier run recorded this job's result; writing it again would duplicate it.
      // DEBUG_MODE without a job to replay judged nothing: the job's earlier record stays the one.
      const nothingReplayed = settings.debugMode && !run.jobId;
      if (nothingReplayed) run.failures.push('nothing was replayed: results.json and the CSV keep what they held for this test');
      const nothingToSave = run.alreadyRecorded || nothingReplayed;
      // The history's part: run context for the run's end, and the check against earlier runs.
      const history = nothingToSave ? undefined : await historyForTest({ settings, runId: inject('runId'), test: planned, record: testRecordOf({ settings, gpu, test: planned, run }), runTests, runTestIds });
      for (const warning of history?.warnings ?? []) console.warn(warning);
      const saved = nothingToSave ? [] : await saveTestResult({ settings, gpu, test: planned, run, history }).catch((err: Error) => {
        // One error that says all: why the test failed (when it did) and why nothing of it was saved.
        const why = run.passed ? '' : `\n- ${run.failures.filter((f) => f !== err.message).join('\n- ')}`;
        throw new FailureError(`${planned.id}: its result could not be saved: ${err.message}${why.trim() === '-' ? '' : why}`);
      });
      ctx.task.meta.disagg = { jobId: run.jobId, state: run.status.state, metrics: run.metrics, files: saved };
      const earlier = run.alreadyRecorded ? ` (result of job ${run.jobId}, recorded by an earlier run)` : '';
      const failures = [...run.failures, ...(history?.failures ?? [])];
      if (failures.length > 0) {
        throw new FailureError(`${planned.id} failed${earlier}:\n- ${failures.join('\n- ')}`);
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

  // What concerns the run as a whole (listed ids that match no config, configs of no test type) is
  // reported once, by the first test-type project of this invocation, whatever `--project` chose
  // (global-setup.ts provides the list); a run of one project still hears of every unknown id.
  const runProjects = inject('runProjects') ?? allTestTypeNames();
  const reportsRunWide = (runProjects[0] ?? allTestTypeNames()[0]) === typeName;
  const unknownIds = reportsRunWide ? plan.unknownListedIds : [];
  if (unknownIds.length > 0) {
    test(`test list ${plan.testList!.file}: unknown ids`, () => {
      throw new InputError(describeUnknownIds(plan.testList!, unknownIds));
    });
  }
  // Configs under a folder that names no test type belong to no project (`vitest --project bogus`
  // only says "no such project"): the reporting project fails each of them.
  const unknownTypeConfigs = reportsRunWide ? configsOfUnknownTypes() : [];
  for (const file of unknownTypeConfigs) {
    test(file.displayFile, () => {
      throw new ConfigError(loadPlannedTest(file, gpu, process.env).issues);
    });
  }
  if (reportsRunWide) {
    const elsewhere = listedTestsOfOtherProjects(runProjects);
    if (elsewhere) console.warn(elsewhere);
  }
  if (plan.tests.length === 0 && unknownIds.length === 0 && unknownTypeConfigs.length === 0) {
    test.skip(plan.testList ? `the test list ${plan.testList.file} selects no config under test_configs/${typeName}/` : `no configs under test_configs/${typeName}/`, () => {});
  }
});
