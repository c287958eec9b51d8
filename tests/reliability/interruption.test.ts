// Interrupting a run, end to end: `vitest run --project disagg` as a child process in its own
// process group, signalled while jobs run. Ctrl-C (SIGINT to the group) and SIGTERM (to Vitest's
// main process alone) cancel every job the run submitted and keep every result already written;
// SIGKILL to the whole group cancels nothing (nothing can run), and RESUME=1 then picks the jobs
// up from the ledger instead of submitting them again, without duplicating a result.
// No test guesses how long anything takes: the slow jobs wait for a file the test creates
// (`wait:FILE` clients), and every check reads what the run recorded (ledger, results, CSV).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import {
  jobOf, readOutputs, recordOf, release, releaseFile, repoRoot, runSuite, standinConfig, startSuite, statesOf, csvRowPrefixOf, testIdOf, waitUntil, writeWorkDir,
  type ClientMode, type SuiteOptions, removeWorkDirs,
} from '../fixtures/reliability/suite-run.ts';
import type { TestRecord } from '../../framework/results/json.ts';

afterAll(removeWorkDirs);

const submitted: string[] = [];

async function workDir(jobs: Record<string, ClientMode>) {
  const configs = Object.fromEntries(await Promise.all(Object.entries(jobs).map(async ([n, client]) => [n, await standinConfig({ client })] as const)));
  return writeWorkDir(configs, 'interrupt-');
}

/** A test's results are all written: its results.json record, and (a test that passed) its CSV rows, written after it in one append. */
function resultWritten(outputs: ReturnType<typeof readOutputs>, name: string): boolean {
  const record = recordOf(outputs.records, testIdOf(name));
  return record !== undefined && (record.verdict !== 'passed' || outputs.csvRows.some((r) => r.startsWith(csvRowPrefixOf(name))));
}

/** Starts the run and waits until `done` tests have written their results and `running` tests' jobs run. */
async function startAndWait(options: SuiteOptions, done: string[], running: string[]) {
  const child = startSuite({ ...options, detached: true });
  const { outputPath } = options;
  await waitUntil(`results of ${done.join(', ')} and jobs of ${running.join(', ')} running`, () => {
    const outputs = readOutputs(outputPath);
    return done.every((n) => resultWritten(outputs, n)) && running.every((n) => statesOf(outputPath, testIdOf(n)).includes('RUNNING'));
  }, 120_000);
  const jobs = Object.fromEntries([...done, ...running].map((n) => [n, jobOf(readOutputs(outputPath).ledger, testIdOf(n))!]));
  submitted.push(...Object.values(jobs));
  return { child, jobs, before: readOutputs(outputPath) };
}

/** Job ids SLURM still lists (pending, running or completing). */
async function stillQueued(ids: string[]): Promise<string[]> {
  const out = await execa('squeue', ['-h', '-o', '%i', '-j', ids.join(',')], { env: clusterEnv(), reject: false });
  return out.stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

/** Pids of processes carrying SLURM_JOB_ID=<one of ids> (a local job's processes carry it too). */
function processesOfJobs(ids: string[]): number[] {
  const wanted = new Set(ids.map((id) => `SLURM_JOB_ID=${id}`));
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
    try {
      return readFileSync(path.join('/proc', pid, 'environ'), 'utf8').split('\0').some((v) => wanted.has(v)) ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

function expectKept(before: { records: TestRecord[]; csvRows: string[] }, outputPath: string, interrupted: string[]) {
  const after = readOutputs(outputPath);
  expect(after.records).toEqual(before.records);
  expect(after.csvRows).toEqual(before.csvRows);
  for (const n of interrupted) {
    expect(recordOf(after.records, testIdOf(n))).toBeUndefined();
    expect(after.ledger.filter((e) => e.test === testIdOf(n)).at(-1)).toMatchObject({ state: 'CANCELLED', terminal: true, interrupted: true });
  }
}

describeCluster.concurrent('interrupting a run', () => {
  afterAll(async () => {
    if (submitted.length) await execa('scancel', submitted, { env: clusterEnv(), reject: false });
  });

  it('Ctrl-C (SIGINT to the process group) cancels every job and keeps the results written; RESUME=1 submits the cancelled ones again', { timeout: 240_000 }, async () => {
    const gate = releaseFile('slow-jobs');
    const dir = await workDir({ fast: 'ok', slow1: `wait:${gate}`, slow2: `wait:${gate}` });
    const options: SuiteOptions = { ...dir, scheduler: 'slurm', env: clusterEnv() };
    const { child, jobs, before } = await startAndWait(options, ['fast'], ['slow1', 'slow2']);
    process.kill(-child.pid!, 'SIGINT');
    const result = await child;
    expect(result.exitCode, String(result.all)).toBe(130);
    await waitUntil('the slow jobs to leave the queue', async () => (await stillQueued([jobs.slow1, jobs.slow2])).length === 0, 60_000);
    expectKept(before, dir.outputPath, ['slow1', 'slow2']);

    release(gate); // the jobs submitted again end at once
    const resumed = await runSuite({ ...options, env: { ...clusterEnv(), RESUME: '1' } });
    expect(resumed.exitCode, resumed.output).toBe(0);
    for (const n of ['fast', 'slow1', 'slow2']) expect(recordOf(resumed.records, testIdOf(n))).toMatchObject({ verdict: 'passed' });
    // The recorded one was not run again; the cancelled ones ran as new jobs.
    expect(recordOf(resumed.records, testIdOf('fast'))!.jobId).toBe(jobs.fast);
    expect(resumed.csvRows.filter((r) => r.startsWith(csvRowPrefixOf('fast')))).toEqual(before.csvRows);
    for (const n of ['slow1', 'slow2']) {
      expect(recordOf(resumed.records, testIdOf(n))!.jobId).not.toBe(jobs[n]);
      // The cancelled job's logs were moved aside, not mixed with the new job's.
      expect(existsSync(path.join(dir.outputPath, 'slurm_logs', `${testIdOf(n)}.${jobs[n]}`, `slurm-${jobs[n]}.out`))).toBe(true);
    }
  });

  it('SIGTERM to the Vitest main process alone cancels every job (its worker notices it is gone) and keeps the results written', { timeout: 180_000 }, async () => {
    const never = releaseFile('never');
    const dir = await workDir({ fast: 'ok', slow1: `wait:${never}`, slow2: `wait:${never}` });
    const { child, jobs, before } = await startAndWait({ ...dir, scheduler: 'slurm', env: clusterEnv() }, ['fast'], ['slow1', 'slow2']);
    process.kill(child.pid!, 'SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.all)).toBe(143);
    await waitUntil('the slow jobs to leave the queue', async () => (await stillQueued([jobs.slow1, jobs.slow2])).length === 0, 60_000);
    // The worker is gone too: nothing of the run is left.
    await waitUntil('the run\'s processes to end', () => processesOfJobs([jobs.slow1, jobs.slow2]).length === 0, 30_000);
    expectKept(before, dir.outputPath, ['slow1', 'slow2']);
  });

  it('on the local backend, Ctrl-C ends every job process and keeps the results written', { timeout: 180_000 }, async () => {
    const dir = await workDir({ fast: 'ok', slow1: `wait:${releaseFile('never')}` });
    const { child, jobs, before } = await startAndWait({ ...dir, scheduler: 'local' }, ['fast'], ['slow1']);
    expect(processesOfJobs([jobs.slow1]).length).toBeGreaterThan(0);
    process.kill(-child.pid!, 'SIGINT');
    await child;
    await waitUntil('the local job\'s processes to end', () => processesOfJobs([jobs.slow1]).length === 0, 30_000);
    expectKept(before, dir.outputPath, ['slow1']);
  });

  it('after SIGKILL, RESUME=1 adopts the jobs still running or ended, submits the rest, duplicates nothing', { timeout: 240_000 }, async () => {
    // Batches of 3: d_later is in the second batch, never submitted before the kill.
    const [short, long] = [releaseFile('b_short'), releaseFile('c_long')];
    const dir = await workDir({ a_fast: 'ok', b_short: `wait:${short}`, c_long: `wait:${long}`, d_later: 'ok' });
    const options: SuiteOptions = { ...dir, scheduler: 'slurm', env: { ...clusterEnv(), DISAGG_BATCH_SIZE: '3' } };
    const { child, jobs, before } = await startAndWait(options, ['a_fast'], ['b_short', 'c_long']);
    process.kill(-child.pid!, 'SIGKILL');
    await child;
    // Nothing could cancel: the jobs live on, and b_short ends while no run watches it.
    expect((await stillQueued([jobs.c_long, jobs.b_short])).length).toBe(2);
    release(short);
    await waitUntil('b_short to end unwatched', async () => (await stillQueued([jobs.b_short])).length === 0, 60_000);

    // c_long is adopted while it still runs, and only then released.
    const resumeRun = startSuite({ ...options, env: { ...options.env, RESUME: '1' } });
    await waitUntil('the resumed run to adopt c_long', () => statesOf(dir.outputPath, testIdOf('c_long')).includes('ADOPTED'), 120_000);
    expect((await stillQueued([jobs.c_long])).length).toBe(1);
    release(long);
    const result = await resumeRun;
    const resumed = { ...readOutputs(dir.outputPath), output: String(result.all), exitCode: result.exitCode };
    expect(resumed.exitCode, resumed.output).toBe(0);
    const names = ['a_fast', 'b_short', 'c_long', 'd_later'];
    expect(resumed.records.map((r) => r.testId).sort()).toEqual(names.map((n) => testIdOf(n)));
    for (const n of names) expect(recordOf(resumed.records, testIdOf(n))).toMatchObject({ verdict: 'passed' });
    // Adopted, not submitted again: same job ids, one SUBMITTED line each, an ADOPTED line from the second run.
    for (const n of ['b_short', 'c_long']) {
      expect(recordOf(resumed.records, testIdOf(n))!.jobId).toBe(jobs[n]);
      const lines = resumed.ledger.filter((e) => e.test === testIdOf(n));
      expect(lines.filter((e) => e.state === 'SUBMITTED')).toHaveLength(1);
      expect(lines.filter((e) => e.state === 'ADOPTED')).toHaveLength(1);
    }
    expect(resumed.ledger.filter((e) => e.test === testIdOf('a_fast') && e.state === 'SUBMITTED')).toHaveLength(1);
    expect(resumed.ledger.filter((e) => e.test === testIdOf('d_later') && e.state === 'SUBMITTED')).toHaveLength(1);
    // Every test's CSV rows once: the rows of a_fast as the first run wrote them, one set per test.
    expect(resumed.csvRows.filter((r) => r.startsWith(csvRowPrefixOf('a_fast')))).toEqual(before.csvRows);
    const perTest = names.map((n) => resumed.csvRows.filter((r) => r.startsWith(csvRowPrefixOf(n))).length);
    expect(new Set(perTest)).toEqual(new Set([before.csvRows.length]));
    expect(resumed.csvRows).toHaveLength(names.length * before.csvRows.length);
  });

  it('after SIGKILL, disagg-bench cleanup cancels and records the jobs left; RESUME=1 then runs every test exactly once', { timeout: 240_000 }, async () => {
    const gate = releaseFile('after-cleanup');
    const dir = await workDir({ fast: 'ok', slow1: `wait:${gate}`, slow2: `wait:${gate}` });
    const options: SuiteOptions = { ...dir, scheduler: 'slurm', env: clusterEnv() };
    const { child, jobs, before } = await startAndWait(options, ['fast'], ['slow1', 'slow2']);
    process.kill(-child.pid!, 'SIGKILL');
    await child;
    expect((await stillQueued([jobs.slow1, jobs.slow2])).length).toBe(2);

    const cleanup = await execa('node', [path.join(repoRoot, 'bin/disagg-bench.js'), 'cleanup'], {
      env: { ...clusterEnv(), OUTPUT_PATH: dir.outputPath }, reject: false, all: true,
    });
    expect(cleanup.exitCode, cleanup.all).toBe(0);
    expect(cleanup.all).toContain(`${jobs.slow1} (${testIdOf('slow1')})`);
    expect(cleanup.all).toContain(`${jobs.slow2} (${testIdOf('slow2')})`);
    await waitUntil('the cancelled jobs to leave the queue', async () => (await stillQueued([jobs.slow1, jobs.slow2])).length === 0, 60_000);
    expectKept(before, dir.outputPath, ['slow1', 'slow2']); // recorded as cancelled by an interruption

    release(gate);
    const resumed = await runSuite({ ...options, env: { ...clusterEnv(), RESUME: '1' } });
    expect(resumed.exitCode, resumed.output).toBe(0);
    const names = ['fast', 'slow1', 'slow2'];
    for (const n of names) {
      const id = testIdOf(n);
      expect(recordOf(resumed.records, id), n).toMatchObject({ verdict: 'passed' }); // one record each
      // Exactly one job of the test ran to its end; none was adopted after its cancellation.
      const lines = resumed.ledger.filter((e) => e.test === id);
      expect(lines.filter((e) => e.state === 'COMPLETED').map((e) => e.job), n).toEqual([recordOf(resumed.records, id)!.jobId]);
      expect(lines.filter((e) => e.state === 'ADOPTED'), n).toEqual([]);
      expect(resumed.csvRows.filter((r) => r.startsWith(csvRowPrefixOf(n))), n).toHaveLength(before.csvRows.length);
    }
    expect(recordOf(resumed.records, testIdOf('fast'))!.jobId).toBe(jobs.fast);
    for (const n of ['slow1', 'slow2']) expect(recordOf(resumed.records, testIdOf(n))!.jobId).not.toBe(jobs[n]);
    expect(resumed.output).toMatch(/RESUME: 1 result\(s\) already recorded, 0 job\(s\) still in flight picked up, 0 ended job\(s\) to judge, 2 test\(s\) to submit/);
  });

  it('on the local backend, SIGKILL leaves no job process (they die with their run); RESUME=1 submits them again', { timeout: 180_000 }, async () => {
    const gate = releaseFile('slow1');
    const dir = await workDir({ fast: 'ok', slow1: `wait:${gate}` });
    const options: SuiteOptions = { ...dir, scheduler: 'local' };
    const { child, jobs } = await startAndWait(options, ['fast'], ['slow1']);
    process.kill(-child.pid!, 'SIGKILL');
    await child;
    await waitUntil('the local job\'s processes to end', () => processesOfJobs([jobs.slow1]).length === 0, 30_000);
    release(gate);
    const resumed = await runSuite({ ...options, env: { RESUME: '1' } });
    expect(recordOf(resumed.records, testIdOf('fast')), resumed.output).toMatchObject({ verdict: 'passed', jobId: jobs.fast });
    expect(recordOf(resumed.records, testIdOf('slow1'))).toMatchObject({ verdict: 'passed' });
    expect(recordOf(resumed.records, testIdOf('slow1'))!.jobId).not.toBe(jobs.slow1);
    expect(resumed.output).toMatch(/RESUME: disagg_perf_slow1: submitting again \(its local job \S+ ended with run /);
  });
});
