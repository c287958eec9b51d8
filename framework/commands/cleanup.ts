// `disagg-bench cleanup [--run ID] [--missing-ok]`: cancels what the ledger says is still in flight,
// for a run that was killed before it could cancel its own jobs, and records each cancellation
// (jobs/leftover-jobs.ts), so a later RESUME=1 submits those tests again.
// Where the ledger is: `disagg-bench run` keeps each run's in OUTPUT_PATH/runs/<run id>/ (the run
// `latest` names, or the one --run names); a run of plain Vitest keeps it in OUTPUT_PATH itself.
// Both are read when both are there.
// Upstream's cleanup_jobs.sh (TensorRT-LLM tests/integration/defs/perf/disagg) says "No jobs.txt
// found, nothing to cancel" and exits 0 when the file is missing; a mistyped OUTPUT_PATH then reads
// as "all clean". Here a missing ledger is an error; --missing-ok keeps upstream's exit 0 (for a CI
// step that runs whether or not the run started).
import path from 'node:path';
import { readSettings, SETTING_VARIABLES } from '../settings.ts';
import { LEDGER_FILE } from '../jobs/ledger.ts';
import { cancelLeftovers, describeLeftovers, ledgerExists, leftoverJobs } from '../jobs/leftover-jobs.ts';
import { allRunFolders, LATEST_LINK, RUNS_FOLDER, runFolderOf } from '../run/run-folder.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';
import { loadExtensions } from '../config/extensions.ts';

const { outputPath: OUTPUT_PATH } = SETTING_VARIABLES;

export const usage = `usage: disagg-bench cleanup [--run ID] [--missing-ok]
  Cancels the SLURM jobs that a run's ledger lists as unfinished (a run killed before it could
  cancel its own), and records each cancellation, so --resume (${SETTING_VARIABLES.resume}=1) submits those tests again.
  The ledger read: that of the run ${OUTPUT_PATH}/${LATEST_LINK} names (disagg-bench run keeps each run in
  ${OUTPUT_PATH}/${RUNS_FOLDER}/<run id>/), and ${OUTPUT_PATH}/${LEDGER_FILE} (a run of npx vitest run).
  --run ID       only the jobs of this run (its folder ${OUTPUT_PATH}/${RUNS_FOLDER}/ID/, or its lines in ${OUTPUT_PATH}/${LEDGER_FILE})
  --missing-ok   exit 0 when there is no ledger (upstream's cleanup_jobs.sh does; default: exit 1)`;

/** The folders whose ledger this cleanup reads: OUTPUT_PATH's own, then the run's folder. */
function ledgerFolders(root: string, run: string | undefined): string[] {
  const runFolder = runFolderOf(root, run);
  return [root, ...(runFolder ? [runFolder] : [])].filter(ledgerExists);
}

/** A line naming other runs of OUTPUT_PATH that still have unfinished jobs, so none is forgotten. */
function otherRunsLine(root: string, read: string[]): string | undefined {
  const others = allRunFolders(root).filter((f) => !read.includes(f) && leftoverJobs(f).length > 0);
  if (others.length === 0) return undefined;
  return `other runs with unfinished jobs: ${others.map((f) => `${path.basename(f)} (disagg-bench cleanup --run ${path.basename(f)})`).join(', ')}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, { options: { run: { type: 'string' }, 'missing-ok': { type: 'boolean', default: false } } });
  const settings = readSettings();
  // A run's jobs may be an extension's scheduler's: WORK_DIR's extensions registered first.
  await loadExtensions(settings.workDir);
  const root = settings.outputPath;
  const folders = ledgerFolders(root, values.run);
  if (folders.length === 0) {
    const flat = path.join(root, LEDGER_FILE);
    const where = values.run
      ? `neither ${flat} nor ${path.join(root, RUNS_FOLDER, values.run, LEDGER_FILE)} exists`
      : `${flat} does not exist and ${path.join(root, LATEST_LINK)} names ${runFolderOf(root) ? 'a run without a ledger' : 'no run'}`;
    const line = `no ledger: ${where}; no run has written to ${OUTPUT_PATH}=${root}; is ${OUTPUT_PATH} the run's?`;
    if (values['missing-ok']) {
      console.log(`${line} (--missing-ok: nothing to cancel)`);
      return 0;
    }
    console.error(`disagg-bench cleanup: ${line}`);
    return 1;
  }
  const named = folders.map((f) => path.join(f, LEDGER_FILE)).join(' and ');
  const withLeftovers = folders.filter((f) => leftoverJobs(f, values.run).length > 0);
  if (withLeftovers.length === 0) {
    console.log(`nothing to cancel: ${named} list${folders.length > 1 ? '' : 's'} no unfinished SLURM job${values.run ? ` of run ${values.run}` : ''}`);
    const others = values.run ? undefined : otherRunsLine(root, folders);
    if (others) console.log(others);
    return 0;
  }
  let failed = false;
  for (const folder of withLeftovers) {
    // Each job through the scheduler its ledger line names (jobs/leftover-jobs.ts).
    const outcome = await cancelLeftovers(folder, { run: values.run, reason: 'cancelled by disagg-bench cleanup (its run left it in flight)' });
    console.log(`${path.join(folder, LEDGER_FILE)}: ${describeLeftovers(outcome)}`);
    failed ||= outcome.failure !== undefined;
  }
  return failed ? 1 : 0;
}
