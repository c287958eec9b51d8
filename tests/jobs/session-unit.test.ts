// The jobs layer (session.ts, job-manager.ts, batch-manager.ts, judge.ts) on its own, at the
// scheduler interface: a RunSession drives a STAND-IN FOR THE CLUSTER (tests/fixtures/jobs/
// recording-scheduler.ts) that records every submit, poll and cancel and plays the states and log
// files each test scripts. Each test decides from what was recorded (the stand-in's timeline, the
// ledger, job.json, results.json), never from timing. The same paths on the real SLURM cluster:
// tests/jobs/serving-suite.test.ts, tests/reliability/{job-faults,scheduler-faults,interruption}.test.ts.
// The interruption tests emit 'disconnect' in this worker (what it hears when Vitest's main process
// is gone); the session then arms a SIGKILL of the worker 60 s later (session.ts): this file must
// keep a worker of its own (Vitest's default isolation), never share one with other files.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RecordingScheduler, type JobScript, type ScriptedState } from '../fixtures/jobs/recording-scheduler.ts';
import {
  GOLDEN_NIXLBENCH_LOG, NIXLBENCH_LOG, NO_GPU, lastLedgerLine, ledgerStates, openSession, plannedTests, scratch, settingsFor, writeConfigs,
  type Scratch,
} from '../fixtures/jobs/run-harness.ts';
import { readJobRecord } from '../../framework/scheduler/log-folder.ts';
import { readLedger } from '../../framework/jobs/ledger.ts';
import { saveTestResult } from '../../framework/jobs/save-result.ts';
import { readResults } from '../../framework/results/json.ts';
import type { RunSession, TestRun } from '../../framework/jobs/session.ts';
import { maxOf } from '../../runners/common/stats.ts';
import type { PlannedTest } from '../../framework/select/plan.ts';

const passing: JobScript = { states: ['PENDING', 'RUNNING', 'COMPLETED'], files: { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG } };

const scratches: Scratch[] = [];
const sessions: RunSession[] = [];
beforeAll(() => {
  // The progress board would print to the test's output; the session's log lines go to the test.
  vi.stubEnv('DISAGG_PROGRESS', 'off');
});
afterEach(async () => {
  // A test that failed half-way must not leave a session listening for signals.
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => {
  vi.unstubAllEnvs();
  for (const s of scratches) s.remove();
});

/** One run of the named configs on a stand-in whose jobs follow `script`. */
interface RunOptions {
  env?: Record<string, string>;
  /** 'local' for a scheduler whose failures are not waited out (SLURM's get 180 s: session.ts). */
  scheduler?: 'slurm' | 'local';
  jobTime?: string;
  refuse?: (testId: string) => string | undefined;
}

async function runOf(names: string[], script: (testId: string) => JobScript, options: RunOptions = {}) {
  const work = scratch('jobs-session');
  scratches.push(work);
  writeConfigs(work, names, { jobTime: options.jobTime });
  const settings = settingsFor(work, options.env);
  const tests = plannedTests(settings);
  const scheduler = new RecordingScheduler({
    name: options.scheduler ?? 'slurm',
    script: (request) => script(request.name),
    refuse: options.refuse && ((request) => options.refuse!(request.name)),
  });
  const { session, log } = await openSession(settings, scheduler);
  sessions.push(session);
  await session.plan(tests);
  const byName = (name: string) => tests.find((t) => t.stem === name)!;
  return { work, settings, tests, scheduler, session, log, byName };
}

describe('submit -> poll -> verdict', () => {
  it('a job that completes with its tool\'s log passes with its metrics; ledger, job.json and polls say how it went', async () => {
    const { session, scheduler, byName, work, log } = await runOf(['ok'], () => passing);
    const test = byName('ok');
    const run = await session.run(test);
    expect(run.failures).toEqual([]);
    expect(run.passed).toBe(true);
    expect(run.metrics.some((m) => m.name === 'BW_GBPS')).toBe(true);
    expect(run.status.state).toBe('COMPLETED');
    const [{ job }] = scheduler.submitted();
    expect(run.jobId).toBe(job);
    // The real job script was built into the test's log folder and is what went to the scheduler.
    const request = scheduler.request(job);
    expect(request.logDir).toBe(path.join(work.outputPath, 'slurm_logs', test.id));
    expect(readFileSync(request.scriptPath, 'utf8')).toMatch(/^#!/);
    expect(existsSync(path.join(request.logDir, 'resolved_config.yaml'))).toBe(true);
    // Every state the watcher saw is in the ledger, once, in order.
    expect(ledgerStates(work.outputPath, test.id)).toEqual(['SUBMITTED', 'PENDING', 'RUNNING', 'COMPLETED']);
    expect(readJobRecord(request.logDir)).toMatchObject({ jobId: job, scheduler: 'slurm', status: { state: 'COMPLETED', terminal: true } });
    expect(scheduler.cancelled()).toEqual([]);
    expect(log.join('\n')).toMatch(/Total batches: 1/);
  });

  it.each<[string, ScriptedState & object, RegExp]>([
    ['failed', { state: 'FAILED', exitCode: 2, reason: 'NonZeroExitCode' }, /job \d+ ended FAILED \(exit code 2\)\nreason: NonZeroExitCode/],
    ['timeout', { state: 'TIMEOUT', reason: 'TimeLimit' }, /job \d+ ended TIMEOUT\nreason: TimeLimit/],
    ['cancelled', { state: 'CANCELLED', reason: 'cancelled by user' }, /job \d+ ended CANCELLED\nreason: cancelled by user/],
    ['node_fail', { state: 'NODE_FAIL', nodes: ['n2', 'n3'], signal: 9 }, /job \d+ ended NODE_FAIL \(signal 9, on n2,n3\)/],
    ['oom', { state: 'OUT_OF_MEMORY', exitCode: 0 }, /job \d+ ended OUT_OF_MEMORY \(exit code 0\)/],
  ])('a job that ends %s fails with the scheduler\'s words and its logs\' last lines, even when its log has metrics', async (name, end, expected) => {
    const stderr = Array.from({ length: 30 }, (_, i) => `stderr line ${i + 1}`).join('\n') + '\n';
    const { session, byName, work } = await runOf([name], () => ({ ...passing, states: ['PENDING', 'RUNNING', end], stderr, stdout: 'nixlbench started\n' }));
    const run = await session.run(byName(name));
    expect(run.passed).toBe(false);
    expect(run.status.state).toBe(end.state);
    expect(run.failures).toHaveLength(1);
    expect(run.failures[0]).toMatch(expected);
    // The last 20 lines of stderr, not the first ten; then stdout.
    expect(run.failures[0]).toContain('stderr line 30');
    expect(run.failures[0]).toContain('stderr line 11\n');
    expect(run.failures[0]).not.toContain('stderr line 10\n');
    expect(run.failures[0]).toMatch(/last lines of .*slurm-\d+\.out:\nnixlbench started/);
    // Metrics of a job that did not complete are not trusted.
    expect(run.metrics).toEqual([]);
    expect(lastLedgerLine(work.outputPath, byName(name).id)).toMatchObject({ state: end.state, terminal: true });
  });

  it('a job that completes but whose log yields nothing fails saying so', async () => {
    const { session, byName } = await runOf(['silent'], () => ({ states: ['RUNNING', 'COMPLETED'], files: { [NIXLBENCH_LOG]: 'nixlbench: no rows today\n' } }));
    const run = await session.run(byName('silent'));
    expect(run.passed).toBe(false);
    expect(run.status.state).toBe('COMPLETED');
    expect(run.failures.join('\n')).toMatch(/nixlbench|no metrics/);
  });

  it('a job the scheduler forgets (missing from its answers) ends UNKNOWN, never passed', async () => {
    const { session, byName, scheduler } = await runOf(['lost'], () => ({ ...passing, states: ['RUNNING'], vanishAfterPolls: 1 }));
    const run = await session.run(byName('lost'));
    expect(run.passed).toBe(false);
    expect(run.status).toMatchObject({ state: 'UNKNOWN', reason: 'the scheduler no longer reports this job' });
    // It was asked about after it vanished (the watcher tolerates a few misses before deciding).
    expect(scheduler.timeline.filter((e) => e.kind === 'poll' && Object.keys(e.answered).length === 0).length).toBeGreaterThanOrEqual(3);
  });

  it('a pending job that can never start is cancelled and fails with the reason', async () => {
    const { session, byName, scheduler } = await runOf(['stuck'], () => ({ states: [{ state: 'PENDING', reason: 'PartitionDoesNotExist', cannotStart: 'PartitionDoesNotExist' }] }));
    const run = await session.run(byName('stuck'));
    expect(run.passed).toBe(false);
    expect(run.status).toMatchObject({ state: 'CANCELLED', reason: 'the job can never start: PartitionDoesNotExist; cancelled' });
    expect(scheduler.cancelled()).toEqual([run.jobId]);
  });

  it('a job still running at the test\'s timeout (time limit + DISAGG_QUEUE_ALLOWANCE_SEC) is cancelled and fails saying so', async () => {
    // job_time 1 s + 0.5 s allowance: the job never ends by itself.
    const { session, byName, scheduler, work } = await runOf(['slow'], () => ({ states: ['RUNNING'] }), { env: { DISAGG_QUEUE_ALLOWANCE_SEC: '0.5' }, jobTime: '00:00:01' });
    const run = await session.run(byName('slow'));
    expect(run.passed).toBe(false);
    expect(run.failures[0]).toMatch(/did not end within the test's timeout of 1\.5 s \(job time limit \+ DISAGG_QUEUE_ALLOWANCE_SEC\); cancelled/);
    expect(scheduler.cancelled()).toEqual([run.jobId]);
    expect(lastLedgerLine(work.outputPath, byName('slow').id)).toMatchObject({ state: 'CANCELLED', terminal: true });
    expect(readJobRecord(scheduler.request(run.jobId!).logDir)?.status.state).toBe('CANCELLED');
  });
});

describe('batches (DISAGG_BATCH_SIZE)', () => {
  const names = ['b1', 'b2', 'b3', 'b4', 'b5'];

  /** Runs every test at once (as the suite's concurrent tests do); returns the runs by test id. */
  async function runAll(session: RunSession, tests: PlannedTest[]): Promise<Map<string, TestRun>> {
    const runs = await Promise.all(tests.map((t) => session.run(t)));
    return new Map(tests.map((t, i) => [t.id, runs[i]]));
  }

  /**
   * Names cut into consecutive groups of the given sizes, each sorted: a batch's submissions go out
   * together, so within a batch they reach the scheduler in any order, while batches stay in order.
   */
  const inBatches = (names: string[], sizes: number[]) => sizes.map((n, k) => names.slice(sizes.slice(0, k).reduce((a, b) => a + b, 0)).slice(0, n).sort());

  it('DISAGG_BATCH_SIZE=2: batch k+1 goes out only after the scheduler reported every job of batch k ended', async () => {
    const { session, tests, scheduler, work } = await runOf(names, () => passing, { env: { DISAGG_BATCH_SIZE: '2' } });
    const runs = await runAll(session, tests);
    expect([...runs.values()].every((r) => r.passed)).toBe(true);
    expect([...runs.values()].map((r) => r.batch)).toEqual([0, 0, 1, 1, 2]);
    const submitted = scheduler.submitted();
    expect(inBatches(submitted.map((s) => s.name), [2, 2, 1])).toEqual(inBatches(tests.map((t) => t.id), [2, 2, 1]));
    const endedAt = (job: string) => scheduler.timeline.findIndex((e) => e.kind === 'poll' && e.answered[job] === 'COMPLETED');
    const submittedAt = (job: string) => scheduler.timeline.findIndex((e) => e.kind === 'submit' && e.job === job);
    for (const [batch, next] of [[[0, 1], [2, 3]], [[2, 3], [4]]] as const) {
      const lastEnd = maxOf(batch.map((i) => endedAt(submitted[i].job)));
      for (const i of next) expect(submittedAt(submitted[i].job)).toBeGreaterThan(lastEnd);
    }
    // Never more than two jobs asked about in one poll: no more than two in flight.
    expect(maxOf(scheduler.timeline.map((e) => (e.kind === 'poll' ? e.jobs.length : 0)))).toBe(2);
    expect(readLedger(work.outputPath).filter((e) => e.state === 'SUBMITTED').map((e) => e.batch)).toEqual([0, 0, 1, 1, 2]);
  });

  it('DISAGG_BATCH_SIZE=0: every job goes out in one batch, and one poll asks about all of them', async () => {
    // The jobs run until this test ends them: however slow the machine, none ends before all went out.
    const { session, tests, scheduler } = await runOf(names, () => ({ ...passing, states: ['RUNNING'] }), { env: { DISAGG_BATCH_SIZE: '0' } });
    const all = runAll(session, tests);
    await vi.waitUntil(() => scheduler.timeline.some((e) => e.kind === 'poll' && e.jobs.length === 5), { timeout: 30_000, interval: 5 });
    for (const { job } of scheduler.submitted()) scheduler.end(job);
    const runs = await all;
    expect([...runs.values()].every((r) => r.passed)).toBe(true);
    expect([...runs.values()].map((r) => r.batch)).toEqual([0, 0, 0, 0, 0]);
    expect(scheduler.submitted()).toHaveLength(5);
  });

  it('a refused submission fails only its own test, and the next batch still goes out', async () => {
    // The stand-in refuses b2's job as sbatch refuses a bad partition.
    const refuse = (id: string) => (id.endsWith('b2') ? 'sbatch: error: invalid partition specified: nope' : undefined);
    const { session, tests, scheduler } = await runOf(names, () => passing, { env: { DISAGG_BATCH_SIZE: '2' }, refuse });
    const runs = await runAll(session, tests);
    const failed = [...runs].filter(([, r]) => !r.passed).map(([id]) => id);
    expect(failed).toEqual([tests[1].id]);
    expect(runs.get(tests[1].id)!.failures[0]).toContain('invalid partition specified');
    // b2's refused job is no submission: batches of 1, 2 and 1 reached the scheduler.
    expect(inBatches(scheduler.submitted().map((s) => s.name), [1, 2, 1])).toEqual(inBatches([tests[0].id, tests[2].id, tests[3].id, tests[4].id], [1, 2, 1]));
  });
});

describe('a scheduler that fails mid-run', () => {
  it('polls failing a few times in a row are tolerated (and said); the job is still judged from its end', async () => {
    const { session, byName, scheduler, log } = await runOf(['flaky'], () => ({ ...passing, states: ['PENDING', 'RUNNING', 'RUNNING', 'COMPLETED'] }), { scheduler: 'local' });
    // Once the job has been seen pending and running, the controller stops answering for three polls.
    scheduler.failPolls(3, { after: 2 });
    const result = await session.run(byName('flaky'));
    expect(result.passed).toBe(true);
    expect(scheduler.timeline.filter((e) => e.kind === 'poll-failed')).toHaveLength(3);
    expect(result.status.state).toBe('COMPLETED');
    expect(log.filter((l) => /poll of local failed \(\d in a row, tolerated\)/.test(l))).toHaveLength(3);
  });

  it('a scheduler that stops answering fails the test saying why; nothing is lost: ledger, results.json, the job cancelled at close', async () => {
    const { session, byName, scheduler, settings, work } = await runOf(['gone'], () => ({ states: ['PENDING', 'RUNNING'] }), { scheduler: 'local' });
    const test = byName('gone');
    scheduler.failPolls(1_000, { after: 2 });
    const result = await session.run(test);
    expect(result.passed).toBe(false);
    expect(result.jobId).toBe('1001');
    expect(result.failures[0]).toMatch(/^polling the local scheduler failed 6 times in a row: slurm_load_jobs error: Unable to contact slurm controller/);
    // The suite writes the test's record as for any other failure.
    await saveTestResult({ settings, gpu: NO_GPU, test, run: result });
    const { records } = await readResults(work.outputPath);
    expect(records).toEqual([expect.objectContaining({ testId: test.id, jobId: '1001', verdict: 'failed', failures: result.failures })]);
    // The job is still owned: closing the run cancels it and records that (a RESUME submits it again).
    expect(ledgerStates(work.outputPath, test.id)).toEqual(['SUBMITTED', 'PENDING', 'RUNNING']);
    await session.close();
    expect(scheduler.cancelled()).toEqual(['1001']);
    expect(lastLedgerLine(work.outputPath, test.id)).toMatchObject({ job: '1001', state: 'CANCELLED', terminal: true, interrupted: true });
  });
});

describe('interruption and close', () => {
  it('the Vitest main process gone: jobs in flight are cancelled at once and recorded, nothing more is submitted', async () => {
    const { session, tests, scheduler, work } = await runOf(['i1', 'i2', 'i3'], () => ({ states: ['RUNNING'] }), { env: { DISAGG_BATCH_SIZE: '2' } });
    const runs = tests.map((t) => session.run(t));
    await vi.waitUntil(() => scheduler.reported('1001') === 'RUNNING' && scheduler.reported('1002') === 'RUNNING', { timeout: 30_000, interval: 5 });
    // What a forked worker hears when its IPC channel closes (session.ts's onDisconnect).
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      process.emit('disconnect');
    } finally {
      stderr.mockRestore();
    }
    const [r1, r2, r3] = await Promise.all(runs);
    // Both at once, in the signal handler (the waits then end, and cancel again: harmless).
    expect(scheduler.timeline.find((e) => e.kind === 'cancel')).toEqual({ kind: 'cancel', jobs: ['1001', '1002'] });
    expect(new Set(scheduler.cancelled())).toEqual(new Set(['1001', '1002']));
    for (const r of [r1, r2]) expect(r.interrupted).toMatch(/^the run was interrupted \(the Vitest main process is gone on /);
    // The third test's batch never went out.
    expect(r3.interrupted).toBeDefined();
    expect(scheduler.submitted()).toHaveLength(2);
    for (const t of tests.slice(0, 2)) expect(lastLedgerLine(work.outputPath, t.id)).toMatchObject({ state: 'CANCELLED', interrupted: true });
    expect(readLedger(work.outputPath).filter((e) => e.test === tests[2].id)).toEqual([]);
  });

  it('an sbatch under way when the run is interrupted: its job is cancelled as it returns and recorded', async () => {
    const { session, tests, scheduler, work } = await runOf(['u1'], () => ({ states: ['RUNNING'] }));
    const release = scheduler.holdSubmissions();
    const run = session.run(tests[0]);
    await vi.waitUntil(() => scheduler.submitted().length === 1, { timeout: 30_000, interval: 5 });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      process.emit('disconnect');
    } finally {
      stderr.mockRestore();
    }
    release();
    const result = await run;
    expect(result.interrupted).toBeDefined();
    expect(scheduler.cancelled()).toEqual(['1001']);
    expect(ledgerStates(work.outputPath, tests[0].id)).toEqual(['SUBMITTED', 'CANCELLED']);
    expect(lastLedgerLine(work.outputPath, tests[0].id)).toMatchObject({ interrupted: true });
  });

  it('close() with tests still waiting cancels their jobs, and the waiting tests end saying so', async () => {
    const { session, tests, scheduler, work } = await runOf(['c1', 'c2'], () => ({ states: ['RUNNING'] }), { env: { DISAGG_BATCH_SIZE: '0' } });
    const runs = Promise.all(tests.map((t) => session.run(t)));
    await vi.waitUntil(() => scheduler.reported('1002') === 'RUNNING', { timeout: 30_000, interval: 5 });
    await session.close();
    const results = await runs;
    expect(results.every((r) => !r.passed)).toBe(true);
    for (const r of results) expect(r.failures[0]).toMatch(/^job 100[12] ended CANCELLED\nreason: the run was aborted; job cancelled/);
    expect(new Set(scheduler.cancelled())).toEqual(new Set(['1001', '1002']));
    expect(scheduler.closed).toBe(true);
    for (const t of tests) expect(lastLedgerLine(work.outputPath, t.id)).toMatchObject({ state: 'CANCELLED', terminal: true });
  });
});
