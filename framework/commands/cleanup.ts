// `disagg-bench cleanup [--run ID] [--missing-ok]`: cancels what the ledger says is still in flight,
// for a run that was killed before it could cancel its own jobs, and records each cancellation
// (jobs/leftover-jobs.ts), so a later RESUME=1 submits those tests again.
// Upstream's cleanup_jobs.sh (TensorRT-LLM tests/integration/defs/perf/disagg) says "No jobs.txt
// found, nothing to cancel" and exits 0 when the file is missing; a mistyped OUTPUT_PATH then reads
// as "all clean". Here a missing ledger is an error; --missing-ok keeps upstream's exit 0 (for a CI
// step that runs whether or not the run started).
import path from 'node:path';
import { readSettings, SETTING_VARIABLES } from '../settings.ts';
import { LEDGER_FILE } from '../jobs/ledger.ts';
import { cancelLeftovers, describeLeftovers, ledgerExists, leftoverJobs } from '../jobs/leftover-jobs.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';
import { loadExtensions } from '../config/extensions.ts';

const { outputPath: OUTPUT_PATH } = SETTING_VARIABLES;

export const usage = `usage: disagg-bench cleanup [--run ID] [--missing-ok]
  Cancels the SLURM jobs that the ledger of ${OUTPUT_PATH} lists as unfinished (a run killed before it
  could cancel its own), and records each cancellation, so ${SETTING_VARIABLES.resume}=1 submits those tests again.
  --run ID       only the jobs of this run
  --missing-ok   exit 0 when ${OUTPUT_PATH} has no ledger (upstream's cleanup_jobs.sh does; default: exit 1)`;

export async function run(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, { options: { run: { type: 'string' }, 'missing-ok': { type: 'boolean', default: false } } });
  const settings = readSettings();
  // A run's jobs may be an extension's scheduler's: WORK_DIR's extensions registered first.
  await loadExtensions(settings.workDir);
  const ledgerFile = path.join(settings.outputPath, LEDGER_FILE);
  if (!ledgerExists(settings.outputPath)) {
    const line = `the ledger ${ledgerFile} does not exist: no run has written to OUTPUT_PATH=${settings.outputPath}; is OUTPUT_PATH the run's?`;
    if (values['missing-ok']) {
      console.log(`${line} (--missing-ok: nothing to cancel)`);
      return 0;
    }
    console.error(`disagg-bench cleanup: ${line}`);
    return 1;
  }
  if (leftoverJobs(settings.outputPath, values.run).length === 0) {
    console.log(`nothing to cancel: the ledger ${ledgerFile} has no unfinished SLURM job${values.run ? ` of run ${values.run}` : ''}`);
    return 0;
  }
  // Each job through the scheduler its ledger line names (jobs/leftover-jobs.ts).
  const outcome = await cancelLeftovers(settings.outputPath, { run: values.run, reason: 'cancelled by disagg-bench cleanup (its run left it in flight)' });
  console.log(describeLeftovers(outcome));
  return outcome.failure ? 1 : 0;
}
