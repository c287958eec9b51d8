// One vocabulary for where a test stands, from the plan to its verdict: the live progress
// (progress-format.ts), the run digest and summary.json (digest/), results.json's verdicts
// (json.ts) and the report (report/) all say a state with the words of this table, and the
// scheduler's two times with the words of TIME_WORDS. docs/report.md prints the table.

/** Every state a test passes through; the last four are how it ended. */
export const TEST_STATES = ['waiting', 'queued', 'running', 'parsing', 'passed', 'failed', 'skipped', 'not run'] as const;
export type TestState = (typeof TEST_STATES)[number];

/** How a test ended: results.json holds the first three (a test not run has no result to record). */
export const END_STATES = ['passed', 'failed', 'skipped', 'not run'] as const satisfies readonly TestState[];
export type EndState = (typeof END_STATES)[number];

export interface StateWords {
  /** The word in the terminal, the digest's table and summary.md (upper case, to stand out in a log). */
  word: string;
  /** What it means, for the docs and --help. */
  means: string;
}

export const STATE_WORDS: Readonly<Record<TestState, StateWords>> = {
  waiting: { word: 'WAITING', means: 'planned; waits for its batch, no job submitted yet' },
  queued: { word: 'QUEUED', means: "its job is submitted and waits in the scheduler's queue (its queue time runs; SLURM says PENDING)" },
  running: { word: 'RUNNING', means: 'the scheduler started its job (its run time runs)' },
  parsing: { word: 'PARSING', means: 'its job ended; its logs are being read and judged' },
  passed: { word: 'PASSED', means: 'its job ran and every check passed' },
  failed: { word: 'FAILED', means: 'its config is invalid, its job failed, or a check (a reference, a regression with DISAGG_REGRESSION=fail) failed' },
  skipped: { word: 'SKIPPED', means: 'not run on purpose (a config for another GPU, a missing transport library); the reason says which' },
  'not run': { word: 'NOT RUN', means: 'it did not reach its end (the run was interrupted, its worker died, another run held it): no result recorded; RESUME=1 continues it' },
};

/** The scheduler's two times of a job, named the same wherever they are shown. */
export const TIME_WORDS = {
  queue: { word: 'queue', means: "from the submission to the scheduler's start of the job" },
  run: { word: 'run', means: "the scheduler's start to its end of the job" },
} as const;

/** Failed first, then what did not finish, then passed, then skipped: the order a reader acts in. */
export const END_STATE_ORDER: Readonly<Record<EndState, number>> = { failed: 0, 'not run': 1, passed: 2, skipped: 3 };
