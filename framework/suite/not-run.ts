// The tests a run selected that have no verdict, each with why, written where a reader looks after
// the run: results.json's `notRun` (results/not-run.ts) and the run digest (summary.json and
// summary.md: the same tests, verdict `not run`, the why as their failure). Two moments write it:
// a run cancelled by a signal (synchronously, before the process exits) and a run that ended early
// (Vitest cancelled it, a worker died), at its end.
import { latestJobStates, readLedger } from '../jobs/ledger.ts';
import { saveNotRunSync } from '../results/not-run.ts';
import { writeRunDigestSync } from '../results/digest/write-digest.ts';

/** How a reader continues the tests a run did not finish. */
export const RESUME_HINT = 'the same command with RESUME=1 (disagg-bench run --resume)';

/**
 * Why each of `ids` has no verdict after the run was cut short by `cause` at `at`: its job was
 * cancelled, it ended without a saved result, or the test was not reached (no job of this run).
 */
export function whyNotRun(ids: readonly string[], outputPath: string, runId: string, cause: string, at: Date): Map<string, string> {
  const when = at.toISOString();
  const jobs = new Map<string, { job: string; state: string; cancelled: boolean }>();
  for (const e of latestJobStates(readLedger(outputPath))) {
    if (e.run === runId) jobs.set(e.test, { job: e.job, state: e.state, cancelled: e.state === 'CANCELLED' || !e.terminal });
  }
  return new Map(ids.map((id) => {
    const job = jobs.get(id);
    if (!job) return [id, `not reached: ${cause} at ${when}, before its job was submitted`];
    if (job.cancelled) return [id, `cancelled: ${cause} at ${when}; its job ${job.job} was cancelled`];
    return [id, `${cause} at ${when}: its job ${job.job} ended ${job.state} but its result was not saved`];
  }));
}

/**
 * Writes the not-run tests into results.json and the digest (synchronously). `testIds` are all the
 * run's tests (the digest lists each). Returns why a write failed, or undefined.
 */
export function recordNotRunSync(outputPath: string, runId: string | undefined, testIds: readonly string[], notRun: ReadonlyMap<string, string>): string | undefined {
  const problems: string[] = [];
  try {
    saveNotRunSync(outputPath, runId, [...notRun].map(([testId, why]) => ({ testId, why })));
  } catch (error) {
    problems.push(`results.json does not list them: ${(error as Error).message}`);
  }
  try {
    writeRunDigestSync({ resultsFolder: outputPath, runId, testIds: [...testIds], interrupted: notRun, resume: RESUME_HINT });
  } catch (error) {
    problems.push(`the run digest could not be written: ${(error as Error).message}`);
  }
  return problems.length ? problems.join('; ') : undefined;
}
