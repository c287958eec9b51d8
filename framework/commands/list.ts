// `disagg-bench list [--type T] [--json]`: what a run would do, without submitting anything.
import { readSettings, SETTING_VARIABLES } from '../settings.ts';
import { detectGpuType, gpuNotice } from '../select/gpu.ts';
import { jobsRunHere, slurmGpuProbe } from '../scheduler/create.ts';
import { allTestTypes } from '../types/registry.ts';
import { gpuTypeProblem, planRun } from '../select/plan.ts';
import { plannedReason, plannedState } from '../select/planned-state.ts';
import { STATE_WORDS } from '../results/test-states.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';
import { UsageError } from '../../runners/common/errors.ts';
import { printJson } from './support/json-output.ts';

const typeNames = () => allTestTypes().map((t) => t.name);
const { testList, gpuType, workDir, outputPath, scheduler } = SETTING_VARIABLES;

export const usage = `usage: disagg-bench list [--type TEST_TYPE] [--json]
  Prints every test id a run would select, with the state a run gives it before its job, in the
  words of the run's progress, digest and report: ${STATE_WORDS.waiting.word} (it would get a job), ${STATE_WORDS.skipped.word}: why
  (another GPU type, a missing transport library), ${STATE_WORDS.failed.word}: invalid config (issues: see
  disagg-bench validate); UNKNOWN: a ${testList} entry that names no test (exit 1).
  --type TEST_TYPE   only this test type (${typeNames().join(', ')})
  --json             one JSON document: {tests: [{id, type, category, state, reason, issues}], unknown: [...]};
                     state: waiting, skipped or failed (the names results.json and summary.json use)
  The run's settings come from the environment (${testList}, ${gpuType}, ${workDir}, ${outputPath}, ${scheduler}, ...: README.md).`;

export async function run(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, { options: { type: { type: 'string' }, json: { type: 'boolean', default: false } } });
  if (values.type !== undefined && !typeNames().includes(values.type)) {
    throw new UsageError(`--type ${JSON.stringify(values.type)} is no test type; expected one of ${typeNames().join(', ')}`, 'type');
  }
  const settings = readSettings();
  const gpuProblem = gpuTypeProblem(settings);
  if (gpuProblem) {
    console.error(`disagg-bench: error: ${gpuProblem}`);
    return 2;
  }
  const gpu = await detectGpuType(process.env, undefined, slurmGpuProbe(settings), { jobsRunHere: jobsRunHere(settings) });
  const plan = planRun({ settings, gpu, testType: values.type });
  for (const notice of plan.notices) console.warn(notice);
  const types = allTestTypes().filter((t) => !values.type || t.name === values.type);
  for (const notice of new Set(types.map((t) => gpuNotice(gpu, t.name, t.assumedGpuType)))) if (notice) console.warn(notice);
  const unknownWhere = (u: (typeof plan.unknownListedIds)[number]) => `${plan.testList!.file}:${u.line}${u.why ? `: ${u.why}` : ''}`;
  if (values.json) {
    printJson({
      tests: plan.tests.map((t) => ({ id: t.id, type: t.testType, category: t.category, state: plannedState(t), reason: plannedReason(t) ?? null, issues: t.issues.length })),
      unknown: plan.unknownListedIds.map((u) => ({ id: u.id, at: unknownWhere(u) })),
    });
  } else {
    for (const t of plan.tests) {
      const reason = plannedReason(t);
      console.log(`${t.id}\t${STATE_WORDS[plannedState(t)].word}${reason ? `: ${reason}` : ''}`);
    }
    for (const u of plan.unknownListedIds) console.log(`${u.id}\tUNKNOWN (${unknownWhere(u)})`);
  }
  return plan.unknownListedIds.length > 0 ? 1 : 0;
}
