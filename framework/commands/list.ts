// `disagg-bench list [--type T] [--json]`: what a run would do, without submitting anything.
import { readSettings, SETTING_VARIABLES } from '../settings.ts';
import { detectGpuType, gpuNotice } from '../select/gpu.ts';
import { slurmGpuProbe } from '../scheduler/create.ts';
import { allTestTypes } from '../types/registry.ts';
import { gpuTypeProblem, planRun, type PlannedTest } from '../select/plan.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';
import { UsageError } from '../../runners/common/errors.ts';
import { printJson } from './support/json-output.ts';

const typeNames = () => allTestTypes().map((t) => t.name);
const { testList, gpuType, workDir, outputPath, scheduler } = SETTING_VARIABLES;

export const usage = `usage: disagg-bench list [--type TEST_TYPE] [--json]
  Prints every test id a run would select, with its state: RUN, SKIP (and why), INVALID (issues:
  see disagg-bench validate) or UNKNOWN (a ${testList} entry that names no test; exit 1).
  --type TEST_TYPE   only this test type (${typeNames().join(', ')})
  --json             one JSON document: {tests: [{id, type, category, state, reason, issues}], unknown: [...]}
  The run's settings come from the environment (${testList}, ${gpuType}, ${workDir}, ${outputPath}, ${scheduler}, ...: README.md).`;

type State = 'RUN' | 'SKIP' | 'INVALID';

function stateOf(t: PlannedTest): State {
  // A config for another GPU is skipped, valid or not (as upstream); its issues are still counted.
  return t.skipReason ? 'SKIP' : t.issues.length ? 'INVALID' : 'RUN';
}

function stateLine(t: PlannedTest): string {
  const issues = `${t.issues.length} issue${t.issues.length > 1 ? 's' : ''}`;
  if (t.skipReason) return `SKIP: ${t.skipReason}${t.issues.length ? ` (also INVALID: ${issues}, see disagg-bench validate)` : ''}`;
  return t.issues.length ? `INVALID (${issues})` : 'RUN';
}

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
  const gpu = await detectGpuType(process.env, undefined, slurmGpuProbe(settings));
  const plan = planRun({ settings, gpu, testType: values.type });
  for (const notice of plan.notices) console.warn(notice);
  const types = allTestTypes().filter((t) => !values.type || t.name === values.type);
  for (const notice of new Set(types.map((t) => gpuNotice(gpu, t.name, t.assumedGpuType)))) if (notice) console.warn(notice);
  const unknownWhere = (u: (typeof plan.unknownListedIds)[number]) => `${plan.testList!.file}:${u.line}${u.why ? `: ${u.why}` : ''}`;
  if (values.json) {
    printJson({
      tests: plan.tests.map((t) => ({ id: t.id, type: t.testType, category: t.category, state: stateOf(t), reason: t.skipReason ?? null, issues: t.issues.length })),
      unknown: plan.unknownListedIds.map((u) => ({ id: u.id, at: unknownWhere(u) })),
    });
  } else {
    for (const t of plan.tests) console.log(`${t.id}\t${stateLine(t)}`);
    for (const u of plan.unknownListedIds) console.log(`${u.id}\tUNKNOWN (${unknownWhere(u)})`);
  }
  return plan.unknownListedIds.length > 0 ? 1 : 0;
}
