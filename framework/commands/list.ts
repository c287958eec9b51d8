// `disagg-bench list [--type T]`: what a run would do, without submitting anything.
import { readSettings } from '../settings.ts';
import { detectGpuType, gpuNotice } from '../select/gpu.ts';
import { slurmGpuProbe } from '../scheduler/create.ts';
import { allTestTypes } from '../types/registry.ts';
import { gpuTypeProblem, planRun } from '../select/plan.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';

export const usage = `usage: disagg-bench list [--type TEST_TYPE]
  Prints every test id a run would select, with its state: RUN, SKIP (and why), INVALID (issues:
  see disagg-bench validate) or UNKNOWN (a TEST_LIST entry that names no test; exit 1).
  --type TEST_TYPE   only this test type (${allTestTypes().map((t) => t.name).join(', ')})
  The run's settings come from the environment (TEST_LIST, GPU_TYPE, WORK_DIR, ...: README.md).`;

export async function run(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, { options: { type: { type: 'string' } } });
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
  for (const t of plan.tests) {
    const issues = `${t.issues.length} issue${t.issues.length > 1 ? 's' : ''}`;
    // A config for another GPU is skipped, valid or not (as upstream); its issues are still counted.
    const state = t.skipReason
      ? `SKIP: ${t.skipReason}${t.issues.length ? ` (also INVALID: ${issues}, see disagg-bench validate)` : ''}`
      : t.issues.length ? `INVALID (${issues})` : 'RUN';
    console.log(`${t.id}\t${state}`);
  }
  for (const u of plan.unknownListedIds) console.log(`${u.id}\tUNKNOWN (${plan.testList!.file}:${u.line}${u.why ? `: ${u.why}` : ''})`);
  return plan.unknownListedIds.length > 0 ? 1 : 0;
}
