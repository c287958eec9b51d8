// Signals to each process of a run, end to end: SIGTERM and SIGINT to the npx the README's command
// starts (npx -> vitest: the checkout's .npmrc has npm exec it through bash), SIGTERM to Vitest's
// main process while its worker loads configs, SIGTERM to the worker alone, SIGKILL to the worker. In every case every process the run started
// ends (a generous bound, not a timing threshold: the point is that none runs on), every job it
// submitted is cancelled and recorded in the ledger, and the tests that did not run to their end
// are named as not run. Real processes, the real SLURM cluster where jobs are SLURM's. Every
// process of a run carries a mark in its environment, so the test finds them all.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { afterAll, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import {
  jobOf, readOutputs, recordOf, releaseFile, removeWorkDirs, standinConfig, startSuite, statesOf, testIdOf, waitUntil, writeWorkDir,
  type ClientMode, type SuiteOptions,
} from '../fixtures/reliability/suite-run.ts';
import type { Json } from '../fixtures/serving/base-config.ts';

afterAll(removeWorkDirs);

/** "Ends within 5 s", with room for a loaded machine: a bound on hanging, not a measurement. */
const ENDS_WITHIN_MS = 30_000;
const submitted: string[] = [];

interface RunProcess {
  pid: number;
  argv: string;
}

/** Live processes carrying the run's mark, but for those SLURM itself runs as jobs (numeric SLURM_JOB_ID). */
function runProcesses(mark: string): RunProcess[] {
  const found: RunProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (!env.includes(`DISAGG_SIGNAL_MARK=${mark}`) || env.some((v) => /^SLURM_JOB_ID=\d+$/.test(v))) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push({ pid: Number(entry), argv: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      // ended while we looked
    }
  }
  return found;
}

const vitestMain = (mark: string) => runProcesses(mark).find((p) => /vitest(\.mjs)? run/.test(p.argv) && !p.argv.startsWith('npm'));
const vitestWorker = (mark: string) => runProcesses(mark).find((p) => p.argv.includes('workers/forks.js'));

async function stillQueued(ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const out = await execa('squeue', ['-h', '-o', '%i', '-j', ids.join(',')], { env: clusterEnv(), reject: false });
  return out.stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

async function workDir(jobs: Record<string, ClientMode>, extra: Record<string, Json> = {}) {
  const configs = Object.fromEntries(await Promise.all(Object.entries(jobs).map(async ([n, client]) => [n, await standinConfig({ client })] as const)));
  return writeWorkDir({ ...configs, ...extra }, 'signals-');
}

/** Starts the run and waits until `done` tests are saved and `running` tests' jobs run. */
async function startAndWait(options: SuiteOptions, done: string[], running: string[]) {
  const child = startSuite({ ...options, detached: true });
  await waitUntil(`${done.join(', ')} saved and ${running.join(', ')} running`, () => {
    const { records } = readOutputs(options.outputPath);
    return done.every((n) => recordOf(records, testIdOf(n))) && running.every((n) => statesOf(options.outputPath, testIdOf(n)).includes('RUNNING'));
  }, 120_000);
  const jobs = Object.fromEntries([...done, ...running].map((n) => [n, jobOf(readOutputs(options.outputPath).ledger, testIdOf(n))!]));
  submitted.push(...Object.values(jobs));
  return { child, jobs };
}

/** The ledger's last word on each test: cancelled by the interruption. */
function expectCancelledAndRecorded(outputPath: string, names: string[]) {
  const { ledger, records } = readOutputs(outputPath);
  for (const n of names) {
    expect(ledger.filter((e) => e.test === testIdOf(n)).at(-1), n).toMatchObject({ state: 'CANCELLED', terminal: true, interrupted: true });
    expect(recordOf(records, testIdOf(n)), n).toBeUndefined();
  }
}

describeCluster.concurrent('signals to the processes of a run', () => {
  afterAll(async () => {
    if (submitted.length) await execa('scancel', submitted, { env: clusterEnv(), reject: false });
  });

  // SIGTERM to npx alone (`kill <pid>`, a job runner): npm passes it on to the process it started,
  // Vitest itself where the checkout's .npmrc has npm start commands through bash (which execs
  // them); with a shell between, that shell dies of it and Vitest sees its launcher gone. SIGINT to
  // the process group (Ctrl-C in a terminal) reaches Vitest itself. (SIGINT to npx alone:
  // tests/run/not-run.test.ts.)
  for (const [signal, group] of [['SIGTERM', false], ['SIGINT', true]] as const) {
    it(`${signal} to npx${group ? '\'s process group (Ctrl-C)' : ' alone'} (npx -> vitest): the run ends, its SLURM jobs are cancelled and recorded, the tests not run are named`, { timeout: 240_000 }, async () => {
      const mark = `npx-${randomBytes(4).toString('hex')}`;
      const never = releaseFile('never');
      const dir = await workDir({ fast: 'ok', slow1: `wait:${never}`, slow2: `wait:${never}` });
      // The Ctrl-C run replaces the reporters (as a CI's --reporter=junit does): the tests not run are named all the same.
      const args = group ? ['--reporter=dot'] : [];
      const options: SuiteOptions = { ...dir, scheduler: 'slurm', viaNpx: true, args, env: { ...clusterEnv(), DISAGG_SIGNAL_MARK: mark } };
      const { child, jobs } = await startAndWait(options, ['fast'], ['slow1', 'slow2']);
      expect(vitestMain(mark), 'Vitest runs under npx').toBeDefined();
      process.kill(group ? -child.pid! : child.pid!, signal);
      const result = await child;
      await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
      await waitUntil('the slow jobs to leave the queue', async () => (await stillQueued([jobs.slow1, jobs.slow2])).length === 0, ENDS_WITHIN_MS);
      expectCancelledAndRecorded(dir.outputPath, ['slow1', 'slow2']);
      expect(recordOf(readOutputs(dir.outputPath).records, testIdOf('fast'))).toMatchObject({ verdict: 'passed' });
      const output = String(result.all);
      const why = group ? `${signal} received by Vitest's main process` : `${signal} received by Vitest's main process|npm exec \\(pid \\d+\\), which started this run, is gone`;
      expect(output).toMatch(new RegExp(`2 test\\(s\\) not run \\(the run was interrupted \\((${why})\\); no result recorded\\)`));
      expect(output).toMatch(/no result recorded\): disagg_perf_slow[12], disagg_perf_slow[12]($|\n)/m);
    });
  }

  it('SIGTERM to Vitest\'s main process while its worker loads configs: the worker does not run on, nothing is left', { timeout: 240_000 }, async () => {
    const mark = `load-${randomBytes(4).toString('hex')}`;
    // A config whose verbatim worker_config is large keeps the worker busy loading (in synchronous code).
    const big = await standinConfig({ client: 'ok' });
    const gen = (big.worker_config as Json).gen as Json;
    for (let k = 0; k < 30_000; k++) gen[`extra_key_${k}`] = k;
    const dir = writeWorkDir({ a_big: stringify(big), b_fast: await standinConfig({ client: 'ok' }) }, 'signals-load-');
    const child = startSuite({ ...dir, scheduler: 'local', detached: true, env: { DISAGG_SIGNAL_MARK: mark, DISAGG_BATCH_SIZE: '1' } });
    const worker = await waitUntil('a Vitest worker', () => vitestWorker(mark), 120_000);
    const main = vitestMain(mark)!;
    process.kill(main.pid, 'SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.all)).toBe(143);
    await waitUntil('every process of the run to end (the worker included)', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
    expect(runProcesses(mark).map((p) => p.pid)).not.toContain(worker.pid);
    // Decided from the files, whichever phase the signal met (it is sent as soon as the worker
    // exists): no job ran to its end after the run was over (an orphaned worker ran them all), no
    // result was written, and whatever was submitted was cancelled and recorded.
    const { ledger, records } = readOutputs(dir.outputPath);
    expect(records).toEqual([]);
    const latest = new Map(ledger.map((e) => [`${e.test} ${e.job}`, e]));
    for (const entry of latest.values()) expect(entry, JSON.stringify(entry)).toMatchObject({ state: 'CANCELLED', interrupted: true });
    if (ledger.length === 0) expect(String(result.all)).toMatch(/no test had been collected yet: none ran|test\(s\) not run/);
  });

  it('SIGTERM to the worker alone: its jobs are cancelled and recorded, its unfinished tests fail as not run, the run ends', { timeout: 240_000 }, async () => {
    const mark = `worker-${randomBytes(4).toString('hex')}`;
    const dir = await workDir({ fast: 'ok', slow: `wait:${releaseFile('never')}` });
    const { child, jobs } = await startAndWait({ ...dir, scheduler: 'local', env: { DISAGG_SIGNAL_MARK: mark } }, ['fast'], ['slow']);
    const worker = vitestWorker(mark)!;
    await waitUntil('the slow job\'s client running', () => runProcesses(mark).some((p) => /standin-client\.sh/.test(p.argv)), 120_000);
    process.kill(worker.pid, 'SIGTERM');
    const result = await child;
    const output = String(result.all);
    expect(result.exitCode, output).toBe(1);
    await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
    expectCancelledAndRecorded(dir.outputPath, ['slow']);
    expect(output).toMatch(new RegExp(`${testIdOf('slow')}: not run: the run was interrupted \\(SIGTERM received on [^)]+\\); no result recorded`));
    // The run digest, printed last, names it not run and how to continue.
    expect(output).toMatch(new RegExp(`^NOT RUN +${testIdOf('slow')} `, 'm'));
    expect(output).toMatch(new RegExp(`not run: ${testIdOf('slow')}; continue with: `));
    expect(recordOf(readOutputs(dir.outputPath).records, testIdOf('fast'))).toMatchObject({ verdict: 'passed', jobId: jobs.fast });
  });

  it('SIGKILL to the worker: the run\'s end cancels and records its SLURM jobs and lists its unfinished tests', { timeout: 240_000 }, async () => {
    const mark = `kill-${randomBytes(4).toString('hex')}`;
    const never = releaseFile('never');
    const dir = await workDir({ fast: 'ok', slow1: `wait:${never}`, slow2: `wait:${never}` });
    const { child, jobs } = await startAndWait({ ...dir, scheduler: 'slurm', env: { ...clusterEnv(), DISAGG_SIGNAL_MARK: mark } }, ['fast'], ['slow1', 'slow2']);
    process.kill(vitestWorker(mark)!.pid, 'SIGKILL');
    const result = await child;
    const output = String(result.all);
    expect(result.exitCode, output).toBe(1);
    await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
    await waitUntil('the slow jobs to leave the queue', async () => (await stillQueued([jobs.slow1, jobs.slow2])).length === 0, ENDS_WITHIN_MS);
    expectCancelledAndRecorded(dir.outputPath, ['slow1', 'slow2']);
    expect(output).toMatch(/2 test\(s\) not run \(their worker ended before they did; no result recorded\): disagg_perf_slow[12], disagg_perf_slow[12]/);
    expect(output).toMatch(/cleanup: cancelled 2 job\(s\) left in flight/);
    // results.json names them, with why.
    const { notRun } = JSON.parse(readFileSync(`${dir.outputPath}/results.json`, 'utf8')) as { notRun?: { testId: string; why: string }[] };
    expect(notRun?.map((n) => [n.testId, n.why]).sort()).toEqual(['slow1', 'slow2'].map((n) => [testIdOf(n), 'its worker ended before it did; no result recorded']));
  });
});

