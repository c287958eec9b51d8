// Which batch a test is in, and when that batch goes out. Batch k holds tests [k*size, (k+1)*size)
// of the run's ordered tests (size 0 = one batch with everything). The first test that needs a batch
// submits all of it; batch k+1 is submitted as soon as every job of batch k has ended, so at most
// `size` jobs are in flight and no test ever sleeps. A batch's submissions go out together, at
// most `concurrentSubmissions` at a time: its last job starts that much sooner, and the batch ends
// with its last job. The log lists them in the batch's order whatever order they returned in.
import { InternalError } from '../../runners/common/errors.ts';

export interface BatchSubmitter {
  /** Builds and submits one test's job; resolves to the job id. */
  submit(testId: string, batch: number): Promise<string>;
  /** Resolves (never rejects) once the job has ended, however it ended. */
  ended(jobId: string): Promise<void>;
}

export interface BatchManagerOptions {
  /** Jobs per batch; 0 = all at once. */
  batchSize: number;
  /** Submissions under way at once (building the job and its sbatch). Default 16. */
  concurrentSubmissions?: number;
  log?: (line: string) => void;
}

const CONCURRENT_SUBMISSIONS = 16;

const RULE = '='.repeat(70);

export class BatchManager {
  readonly batches: string[][];
  private readonly batchIndex = new Map<string, number>();
  private readonly submissions = new Map<number, Map<string, Promise<string>>>();
  /** Batches whose every job has ended (the next one is going out). */
  private readonly endedBatches = new Set<number>();
  /** Per batch: resolves once every one of its submissions has returned (or failed). */
  private readonly allOut = new Map<number, Promise<void>>();
  private readonly log: (line: string) => void;
  private readonly concurrency: number;

  constructor(
    testIds: string[],
    private readonly submitter: BatchSubmitter,
    options: BatchManagerOptions,
  ) {
    const size = options.batchSize === 0 ? Math.max(testIds.length, 1) : options.batchSize;
    this.batches = [];
    for (let i = 0; i < testIds.length; i += size) this.batches.push(testIds.slice(i, i + size));
    this.batches.forEach((ids, b) => ids.forEach((id) => this.batchIndex.set(id, b)));
    this.log = options.log ?? (() => {});
    this.concurrency = Math.max(1, options.concurrentSubmissions ?? CONCURRENT_SUBMISSIONS);
    this.log(
      [RULE, 'Batch Manager Initialized', `Batch size: ${options.batchSize === 0 ? 'all' : size} jobs per batch`, RULE, '',
        `Total test configs: ${testIds.length}`, `Total batches: ${this.batches.length}`].join('\n'),
    );
  }

  batchOf(testId: string): number {
    const batch = this.batchIndex.get(testId);
    if (batch === undefined) throw new InternalError(`test ${testId} is not part of this run's batches`);
    return batch;
  }

  /** The test's job id, submitting its batch (after the previous batch ended) when needed. */
  jobFor(testId: string): Promise<string> {
    return this.submitBatch(this.batchOf(testId)).get(testId)!;
  }

  private submitBatch(batch: number): Map<string, Promise<string>> {
    const existing = this.submissions.get(batch);
    if (existing) return existing;
    const jobs = new Map<string, Promise<string>>();
    this.submissions.set(batch, jobs);
    const ids = this.batches[batch];
    const from = this.batches.slice(0, batch).reduce((n, b) => n + b.length, 0);
    const start = (batch > 0 ? this.allEnded(batch - 1) : Promise.resolve()).then(() => {
      if (batch > 0) this.endedBatches.add(batch - 1);
      this.log(`${RULE}\nSubmitting Batch ${batch}\nRange: [${from}:${from + ids.length}] (${ids.length} jobs)\n${RULE}`);
    });
    // The batch's tests in order, each submitted when one of `concurrency` slots is free.
    const waiting: Array<() => void> = [];
    let free = this.concurrency;
    const slot = () => (free > 0 ? (free--, Promise.resolve()) : new Promise<void>((resolve) => waiting.push(resolve)));
    const release = () => (waiting.length > 0 ? waiting.shift()!() : free++);
    let logged: Promise<void> = start;
    for (const [i, id] of ids.entries()) {
      const job = start.then(slot).then(() => this.submitter.submit(id, batch)).finally(release);
      jobs.set(id, job);
      const tag = `  [${String(i + 1).padStart(3)}/${ids.length}]`;
      logged = logged.then(() => job).then(
        (jobId) => this.log(`${tag} Job ${jobId} <- ${id}`),
        (err: Error) => this.log(`${tag} FAILED to submit ${id}: ${err.message}`),
      );
    }
    this.allOut.set(batch, logged);
    return jobs;
  }

  /**
   * Resolves once the batch after `batch` is out (each of its submissions returned) when `batch`
   * has ended, at once otherwise (jobs of `batch` still running, or no batch after it). What a
   * test does after its job ended (judging it, saving its result) waits on this, so that at a
   * batch's end the next batch's submissions go first: they are what the run's length waits on.
   */
  async nextBatchOut(batch: number): Promise<void> {
    // The batch's last job and the start of the next batch's submissions are one poll's news:
    // once the microtasks of that answer have run, endedBatches says whether this batch is over.
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.endedBatches.has(batch)) return;
    await this.allOut.get(batch + 1);
  }

  /** Resolves once every job of the batch has ended (or failed to be submitted). */
  private async allEnded(batch: number): Promise<void> {
    const jobs = this.submitBatch(batch);
    await Promise.all(
      [...jobs.values()].map((p) => p.then((job) => this.submitter.ended(job), () => undefined)),
    );
  }
}
