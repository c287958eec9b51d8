// A run cut short names every selected test that got no verdict, with why, in results.json's
// `notRun` and in the run digest (summary.json), through both entry points: `disagg-bench run` and
// `npx vitest run --project disagg`. Cut short by a signal (to the npx process alone, SIGINT
// included, which npm's default shell used to swallow), by Vitest itself (--bail after a failure).
// The local scheduler, STAND-IN serving jobs (tests/fixtures/reliability/suite-run.ts) that wait on
// a file the test never creates; every check reads what the run recorded.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HOST_VARIABLES, readOutputs, releaseFile, removeWorkDirs, repoRoot, standinConfig, startSuite, statesOf, testIdOf, waitUntil, writeWorkDir,
} from '../fixtures/reliability/suite-run.ts';
import type { NotRunTest } from '../../framework/results/json.ts';
import type { Digest } from '../../framework/results/digest/digest.ts';

afterAll(removeWorkDirs);

/** A bound on hanging, with room for a loaded machine: not a measurement. */
const ENDS_WITHIN_MS = 30_000;

function notRunOf(folder: string): NotRunTest[] {
  return (JSON.parse(readFileSync(path.join(folder, 'results.json'), 'utf8')) as { notRun?: NotRunTest[] }).notRun ?? [];
}

function digestOf(folder: string): Digest {
  return JSON.parse(readFileSync(path.join(folder, 'summary.json'), 'utf8')) as Digest;
}

/** Live processes carrying the mark (the run, its workers, its local jobs). */
function markedProcesses(mark: string): number[] {
  return markedCommands(mark).map((p) => p.pid);
}

/** The live processes carrying the run's mark, each with its command line (read while it lived). */
function markedCommands(mark: string): { pid: number; argv: string }[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DISAGG_NOT_RUN_MARK=${mark}`)) return [];
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return [];
      return [{ pid: Number(pid), argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') }];
    } catch {
      return []; // ended while we looked
    }
  });
}

/** Two tests whose jobs never end on their own, one batch at a time: one runs, the other waits. */
async function twoSleepers(prefix: string) {
  const never = releaseFile('never');
  return writeWorkDir({ a_first: await standinConfig({ client: `wait:${never}` }), b_second: await standinConfig({ client: `wait:${never}` }) }, prefix);
}

/** The digest's tests not run, each with its why, as results.json lists them. */
function expectDigestAgrees(folder: string): void {
  const digest = digestOf(folder);
  const notRun = digest.tests.filter((t) => t.verdict === 'not run').map((t) => ({ testId: t.testId, why: t.failures[0] }));
  expect(notRun).toEqual(expect.arrayContaining(notRunOf(folder).map((n) => ({ testId: n.testId, why: n.why }))));
  expect(digest.totals.notRun).toBe(notRunOf(folder).length);
}

describe.concurrent('results.json names the tests a cut-short run did not run', () => {
  it('SIGINT to the npx process alone (npx disagg-bench run): the run ends, its job cancelled, both tests listed with why', { timeout: 300_000 }, async () => {
    const dir = await twoSleepers('not-run-npx-');
    const mark = randomBytes(4).toString('hex');
    const env: Record<string, string | undefined> = { ...process.env };
    for (const name of [...HOST_VARIABLES, 'OUTPUT_PATH', 'SCHEDULER', 'DISAGG_BATCH_SIZE']) delete env[name];
    // From the checkout, as the README has it (its .npmrc chooses npm's shell).
    const child = execa('npx', ['disagg-bench', 'run', 'disagg', '--scheduler', 'local', '--batch-size', '1', '--output', dir.outputPath], {
      cwd: repoRoot, env: { ...env, DISAGG_BIN: 'tsx', WORK_DIR: dir.workDir, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_NOT_RUN_MARK: mark },
      extendEnv: false, all: true, reject: false, stdin: 'ignore', detached: true, timeout: 280_000,
    });
    const runDir = path.join(dir.outputPath, 'latest');
    await waitUntil('the first job to run', () => statesOf(runDir, testIdOf('a_first')).includes('RUNNING'), 240_000);
    process.kill(child.pid!, 'SIGINT');
    const result = await child;
    const output = String(result.all);
    await waitUntil('every process of the run to end', () => markedProcesses(mark).length === 0, ENDS_WITHIN_MS);
    expect(output).toMatch(/SIGINT received by disagg-bench run/);
    expect(readOutputs(runDir).ledger.filter((e) => e.test === testIdOf('a_first')).at(-1)).toMatchObject({ state: 'CANCELLED', interrupted: true });
    const run = readOutputs(runDir).ledger[0].run;
    const byTest = new Map(notRunOf(runDir).map((n) => [n.testId, n]));
    expect(byTest.get(testIdOf('a_first'))).toEqual({
      testId: testIdOf('a_first'), run,
      why: expect.stringMatching(/^cancelled: the run was interrupted \(SIGINT received by disagg-bench run\) at \d{4}-\d\d-\d\dT[\d:.]+Z; its job \S+ was cancelled$/),
    });
    expect(byTest.get(testIdOf('b_second'))).toEqual({
      testId: testIdOf('b_second'), run,
      why: expect.stringMatching(/^not reached: the run was interrupted \(SIGINT received by disagg-bench run\) at \S+Z, before its job was submitted$/),
    });
    expect(byTest.size).toBe(2);
    expectDigestAgrees(runDir);
  });

  it('SIGTERM to Vitest\'s main process (npx vitest run --project disagg): the same list, in OUTPUT_PATH', { timeout: 300_000 }, async () => {
    const dir = await twoSleepers('not-run-vitest-');
    const mark = randomBytes(4).toString('hex');
    const child = startSuite({ ...dir, scheduler: 'local', detached: true, env: { DISAGG_BATCH_SIZE: '1', DISAGG_NOT_RUN_MARK: mark } });
    await waitUntil('the first job to run', () => statesOf(dir.outputPath, testIdOf('a_first')).includes('RUNNING'), 240_000);
    const main = markedCommands(mark).find((p) => /vitest(\.mjs)? run/.test(p.argv));
    process.kill(main!.pid, 'SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.all)).toBe(143);
    await waitUntil('every process of the run to end', () => markedProcesses(mark).length === 0, ENDS_WITHIN_MS);
    const byTest = new Map(notRunOf(dir.outputPath).map((n) => [n.testId, n.why]));
    expect(byTest.get(testIdOf('a_first'))).toMatch(/^cancelled: the run was interrupted \(SIGTERM received by Vitest's main process\) at \S+Z; its job \S+ was cancelled$/);
    expect(byTest.get(testIdOf('b_second'))).toMatch(/^not reached: .*before its job was submitted$/);
    expect(byTest.size).toBe(2);
    expectDigestAgrees(dir.outputPath);
  });

  it('--bail after a failure: Vitest cancels the run; the test still waiting on its job is listed, the job cancelled and recorded', { timeout: 300_000 }, async () => {
    const never = releaseFile('never');
    const dir = writeWorkDir({ a_fails: await standinConfig({ client: 'exit:3' }), b_sleeps: await standinConfig({ client: `wait:${never}` }) }, 'not-run-bail-');
    const result = await startSuite({ ...dir, scheduler: 'local', args: ['--bail', '1'] });
    const output = String(result.all);
    expect(result.exitCode, output).toBe(1);
    const { records, ledger } = readOutputs(dir.outputPath);
    expect(records.map((r) => [r.testId, r.verdict])).toEqual([[testIdOf('a_fails'), 'failed']]);
    expect(ledger.filter((e) => e.test === testIdOf('b_sleeps')).at(-1)).toMatchObject({ state: 'CANCELLED', terminal: true, interrupted: true });
    // Why, in the words of whichever reached the main process first: the worker's test ending as
    // interrupted, or Vitest ending the run with the test still pending (then its worker's end).
    expect(notRunOf(dir.outputPath)).toEqual([{ testId: testIdOf('b_sleeps'), run: expect.stringMatching(/^run-/), why: expect.stringMatching(/^the run was interrupted \(Vitest cancelled the run: a test failed under --bail on \S+\)$|^its worker ended before it did; no result recorded$/) }]);
    expectDigestAgrees(dir.outputPath);
  });
});
