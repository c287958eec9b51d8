// RESUME=1: a run that was killed (SIGKILL, a lost terminal, a crashed CI runner) is started
// again on the same OUTPUT_PATH and picks up where it stopped, from the ledger and results.json:
//
//   the test's latest job (ledger)            | what the resumed run does
//   ------------------------------------------+-----------------------------------------------
//   none, or run by another scheduler kind    | submits a job
//   has a record in results.json              | reports that record; submits and writes nothing
//   cancelled because its run was interrupted | submits a job again (Ctrl-C cancelled it)
//   ended, not judged yet                     | judges it from its logs and final state
//   still queued or running, on a scheduler   | watches it to its end and judges it
//     whose jobs outlive their run (SLURM)    |
//   still running on one whose jobs die with  | submits again
//     their run (the local scheduler)         |
//
// "Latest" is the test's last ledger line in any run; an adopted job keeps its id, its log folder
// and its deadline (submission time + the test's timeout).
import type { JobStatus, Scheduler } from '../scheduler/scheduler.ts';
import { jobsOutliveRun } from '../scheduler/registry.ts';
import { holdsResult, readResults, type TestRecord } from '../results/json.ts';
import { lastJobPerTest, readLedger, submissionOf, type LedgerEntry } from './ledger.ts';
import { readJobRecord } from '../scheduler/log-folder.ts';

export type ResumeAction =
  | { kind: 'submit'; note?: string }
  | { kind: 'recorded'; job: string; record: TestRecord }
  | {
      kind: 'adopt';
      job: string;
      /** The test's latest ledger line (which run, which state). */
      latest: LedgerEntry;
      /** The job's SUBMITTED line: its submission time, timeout and log folder. */
      submitted?: LedgerEntry;
      /** Set when the job is known to have ended: it is judged without waiting. */
      ended?: JobStatus;
    };

/**
 * What a resumed run does with each of its tests (see the table above). `scheduler` is the run's
 * scheduler, or a registered scheduler's name.
 */
export async function planResume(outputPath: string, scheduler: string | Pick<Scheduler, 'name' | 'capabilities'>, testIds: string[]): Promise<Map<string, ResumeAction>> {
  const runOn = typeof scheduler === 'string' ? { name: scheduler, outlives: jobsOutliveRun(scheduler) } : { name: scheduler.name, outlives: scheduler.capabilities.jobsOutliveRun };
  const entries = readLedger(outputPath);
  const latestByTest = lastJobPerTest(entries);
  // A skip is no result: a test skipped before and runnable now is run (its skip has no job anyway)
  const records = (await readResults(outputPath)).records.filter(holdsResult);
  const actions = new Map<string, ResumeAction>();
  for (const test of testIds) {
    const latest = latestByTest.get(test);
    actions.set(test, latest ? resumeAction(latest, runOn, entries, records) : { kind: 'submit' });
  }
  return actions;
}

function resumeAction(latest: LedgerEntry, scheduler: { name: string; outlives: boolean }, entries: LedgerEntry[], records: TestRecord[]): ResumeAction {
  const job = latest.job;
  if (latest.scheduler !== scheduler.name) return { kind: 'submit', note: `its last job ${job} ran under the ${latest.scheduler} scheduler` };
  const record = records.find((r) => r.testId === latest.test && r.jobId === job);
  if (record) return { kind: 'recorded', job, record };
  if (latest.interrupted) return { kind: 'submit', note: `its job ${job} was cancelled when run ${latest.run} was interrupted` };
  const submitted = submissionOf(entries, latest.test, job);
  if (latest.terminal) return { kind: 'adopt', job, latest, submitted, ended: endedStatus(latest, submitted) };
  if (!scheduler.outlives) return { kind: 'submit', note: `its ${scheduler.name} job ${job} ended with run ${latest.run}` };
  return { kind: 'adopt', job, latest, submitted };
}

/** How an ended job ended: job.json when it was written for this job, else the ledger's line. */
function endedStatus(latest: LedgerEntry, submitted: LedgerEntry | undefined): JobStatus {
  const logDir = latest.logDir ?? submitted?.logDir;
  const record = logDir ? readJobRecord(logDir) : undefined;
  if (record?.jobId === latest.job && record.status.terminal) return record.status;
  return { id: latest.job, state: latest.state as JobStatus['state'], terminal: true, ...(latest.reason && { reason: latest.reason }) };
}

/** One line for the run's log: how many tests each action covers. */
export function describeResume(actions: Map<string, ResumeAction>): string {
  const count = (kind: ResumeAction['kind'], ended?: boolean) =>
    [...actions.values()].filter((a) => a.kind === kind && (ended === undefined || (a.kind === 'adopt' && !!a.ended === ended))).length;
  return (
    `RESUME: ${count('recorded')} result(s) already recorded, ${count('adopt', false)} job(s) still in flight picked up, ` +
    `${count('adopt', true)} ended job(s) to judge, ${count('submit')} test(s) to submit`
  );
}
