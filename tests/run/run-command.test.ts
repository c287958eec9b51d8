// `disagg-bench run` end to end, on the real local scheduler with STAND-IN serving jobs (the serving
// engine cannot run here; tests/fixtures/reliability/suite-run.ts): a profile and the command line
// set the run, each run has its own folder under OUTPUT_PATH/runs/ while the history and upstream's
// CSV accumulate at OUTPUT_PATH, reporters named on the command line leave the history and report.html in place,
// SIGTERM at any moment cancels the jobs, names the tests not run and exits 143, and --resume
// continues. Nothing here times anything: jobs wait on a file the test creates, and every check
// reads what the run recorded (ledger, results.json, the history, its output).
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HOST_VARIABLES, readOutputs, recordOf, release, releaseFile, removeWorkDirs, repoRoot, standinConfig, startSuite, statesOf, testIdOf, waitUntil, writeWorkDir,
} from '../fixtures/reliability/suite-run.ts';
import { schedulerNameProblem } from '../../framework/scheduler/create.ts';
import { testTypeNames } from '../../framework/contract/names.ts';

afterAll(removeWorkDirs);

/** A bound on hanging, with room for a loaded machine: not a measurement. */
const ENDS_WITHIN_MS = 30_000;

function startRun(args: string[], dir: { workDir: string }, mark: string, env: Record<string, string | undefined> = {}) {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of [...HOST_VARIABLES, 'OUTPUT_PATH', 'SCHEDULER', 'DISAGG_BATCH_SIZE', 'DISAGG_RUN_LABEL']) delete base[name];
  // DISAGG_BIN=tsx: the sources of this checkout, whichever CLI bundle a shared install holds.
  return execa('node', [path.join(repoRoot, 'bin/disagg-bench.js'), 'run', ...args], {
    cwd: path.dirname(dir.workDir),
    env: Object.fromEntries(Object.entries({ ...base, DISAGG_BIN: 'tsx', WORK_DIR: dir.workDir, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_RUN_MARK: mark, ...env }).filter(([, v]) => v !== undefined)),
    extendEnv: false, all: true, reject: false, stdin: 'ignore', timeout: 240_000,
    // A signalled run cancels its jobs and writes its report before it exits: execa's SIGKILL 5 s
    // after a kill (its default) cut it short on a loaded box, and the exit code was lost.
    forceKillAfterDelay: 120_000,
  });
}

/** Live processes carrying the run's mark (the run, its Vitest workers, its local jobs). */
function runProcesses(mark: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DISAGG_RUN_MARK=${mark}`)) return [];
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z') ? [] : [Number(pid)];
    } catch {
      return [];
    }
  });
}

/**
 * Whether bin/disagg-bench.js's handlers are in place, from /proc's caught-signal mask: SIGHUP's bit
 * (Node itself catches SIGINT and SIGTERM from its start to restore the terminal, then dies of them;
 * bin adds SIGHUP last, in the same synchronous step).
 */
function binHandlesSignals(pid: number): boolean {
  try {
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) !== 0n;
  } catch {
    return false;
  }
}

const newMark = () => `run-${randomBytes(4).toString('hex')}`;

describe('disagg-bench run', () => {
  it('takes a profile and the command line, says where each setting came from, and writes the history and report.html with --reporter=junit; one folder per run', { timeout: 300_000 }, async () => {
    const dir = writeWorkDir({ a: await standinConfig({ client: 'ok' }), b: await standinConfig({ client: 'ok' }) }, 'run-cmd-');
    writeFileSync(path.join(dir.workDir, 'disagg-bench.yaml'), 'profiles:\n  smoke:\n    scheduler: local\n    label: smoke-run\n    batch-size: 1\n');
    const mark = newMark();
    // The README's JUnit line, as a CI names it: the XML goes to the file named (relative to where the command runs), not onto stdout.
    const args = ['disagg', '--profile', 'smoke', '--batch-size', '0', '--output', 'out', '--reporter=default', '--reporter=junit', '--outputFile.junit=ci/junit.xml'];
    // As in CI: output piped, CI set, no NO_COLOR: no colour codes in the log.
    const result = await startRun(args, dir, mark, { CI: 'true', NO_COLOR: undefined, FORCE_COLOR: undefined });
    const output = String(result.all);
    expect(result.exitCode, output).toBe(0);
    expect(output).not.toMatch(/\u001b\[/);
    const settingLines = output.split('\n').filter((l) => /^ {2}\S/.test(l) && /\((command line|profile|environment)/.test(l)).map((l) => l.trim().replace(/\s+/g, ' '));
    const profileFile = path.join(dir.workDir, 'disagg-bench.yaml');
    expect(settingLines).toEqual(expect.arrayContaining([
      'batch-size 0 (command line)',
      `scheduler local (profile smoke in ${profileFile})`,
      `output ${dir.outputPath} (command line)`,
      `label smoke-run (profile smoke in ${profileFile})`,
      'gpu-type GB200 (environment GPU_TYPE)',
    ]));
    expect(output.match(/settings that are not their default/g)).toHaveLength(1);
    // --reporter=junit replaced the reporters: the JUnit XML is there, and so are the history and the report.
    const junit = path.join(path.dirname(dir.workDir), 'ci', 'junit.xml');
    expect(readFileSync(junit, 'utf8')).toMatch(/<testsuites name="vitest tests" tests="2" failures="0"/);
    expect(output).not.toMatch(/<testsuites/);
    expect(output).toContain(`the junit reporter writes ${junit}`);
    expect(output).toMatch(/history: 2 record\(s\), \d+ metric value\(s\) appended/);
    const first = readlinkSync(path.join(dir.outputPath, 'latest'));
    expect(first).toMatch(/^runs\/run-/);
    const firstDir = path.join(dir.outputPath, first);
    expect(existsSync(path.join(firstDir, 'report.html'))).toBe(true);
    // The run's claims went with it: no empty runs/ inside its folder.
    expect(existsSync(path.join(firstDir, 'runs'))).toBe(false);
    const { records, ledger } = readOutputs(firstDir);
    expect(records.map((r) => r.verdict)).toEqual(['passed', 'passed']);
    expect(new Set(ledger.map((e) => e.scheduler))).toEqual(new Set(['local']));
    expect(records.map((r) => r.run?.label)).toEqual(['smoke-run', 'smoke-run']);
    expect(records.map((r) => r.run?.id)).toEqual([path.basename(first), path.basename(first)]);
    expect(runProcesses(mark)).toEqual([]);

    // A second run into the same OUTPUT_PATH: its own folder and report; the history and upstream's CSV accumulate at OUTPUT_PATH.
    // --reporter=junit alone: the XML in the run's folder, the run's output free of it.
    const again = await startRun(args.filter((a) => !a.startsWith('--reporter=default') && !a.startsWith('--outputFile')), dir, mark);
    expect(again.exitCode, String(again.all)).toBe(0);
    const second = readlinkSync(path.join(dir.outputPath, 'latest'));
    expect(second).not.toBe(first);
    expect(readdirSync(path.join(dir.outputPath, 'runs')).sort()).toEqual([path.basename(first), path.basename(second)].sort());
    expect(readOutputs(path.join(dir.outputPath, second)).records).toHaveLength(2);
    expect(readFileSync(path.join(dir.outputPath, second, 'junit.xml'), 'utf8')).toMatch(/<testsuites name="vitest tests" tests="2" failures="0"/);
    expect(String(again.all)).not.toMatch(/<testsuites/);
    expect(readOutputs(firstDir).records).toHaveLength(2);
    const ownRows = (folder: string) => readOutputs(folder).csvRows;
    expect(readOutputs(dir.outputPath).csvRows).toEqual([...ownRows(firstDir), ...ownRows(path.join(dir.outputPath, second))]);
    expect(ownRows(firstDir).length).toBeGreaterThan(0);
    expect(String(again.all)).toMatch(/history: 2 record\(s\), \d+ metric value\(s\) appended/);
    expect(existsSync(path.join(dir.outputPath, 'history.duckdb'))).toBe(true);
    expect(existsSync(path.join(firstDir, 'history.duckdb'))).toBe(false);
    // The index of runs beside them, from the history: the second run first, each linking its own report.
    const index = readFileSync(path.join(dir.outputPath, 'index.html'), 'utf8');
    expect([...index.matchAll(/<tr[^>]* data-run="([^"]+)"><td class="id"><a href="([^"]+)">/g)].map((m) => [m[1], m[2]])).toEqual(
      [second, first].map((folder) => [path.basename(folder), `${folder}/report.html`]),
    );
    expect(String(again.all)).toContain(`runs: ${path.join(dir.outputPath, 'index.html')}`);
    expect(readFileSync(path.join(dir.outputPath, second, 'report.html'), 'utf8')).toContain('<a id="index-link" href="../../index.html">All runs</a>');
  });

  it('SIGTERM while a job runs: the job is cancelled and recorded, the test named as not run, exit 143; --resume continues it', { timeout: 600_000 }, async () => {
    const gate = releaseFile('gate');
    const dir = writeWorkDir({ slow: await standinConfig({ client: `wait:${gate}` }) }, 'run-sig-');
    const mark = newMark();
    const child = startRun(['--scheduler', 'local', '--output', dir.outputPath], dir, mark);
    const runDir = path.join(dir.outputPath, 'latest');
    await waitUntil('the slow job to run', () => statesOf(runDir, testIdOf('slow')).includes('RUNNING'), 300_000);
    child.kill('SIGTERM');
    const result = await child;
    const output = String(result.all);
    expect(result.exitCode, output).toBe(143);
    // Through Vitest's cancelCurrentRun: the run ends as any run does, its report.html written.
    expect(output).toMatch(/SIGTERM received by disagg-bench run: cancelling the run's jobs and tests/);
    expect(output).not.toMatch(/ending it at once/);
    expect(existsSync(path.join(runDir, 'report.html'))).toBe(true);
    expect(output).toMatch(/1 test\(s\) not run \(the run was interrupted \(SIGTERM received by disagg-bench run\); no result recorded\): disagg_perf_slow/);
    // OUTPUT_PATH as given, where `latest` is: the run's folder copied into --resume would name no run.
    expect(output.split('\n').filter((l) => l.includes('to continue:')).map((l) => l.replace(/^.*to continue: /, ''))).toContain(`the same command with --resume (disagg-bench run), OUTPUT_PATH=${dir.outputPath}`);
    await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
    expect(readOutputs(runDir).ledger.at(-1)).toMatchObject({ test: testIdOf('slow'), state: 'CANCELLED', terminal: true, interrupted: true });
    expect(readOutputs(runDir).records).toEqual([]);
    const interrupted = readlinkSync(runDir);
    const notRun = () => (JSON.parse(readFileSync(path.join(runDir, 'results.json'), 'utf8')) as { notRun?: { testId: string; run: string; why: string }[] }).notRun;
    expect(notRun()).toEqual([{ testId: testIdOf('slow'), run: path.basename(interrupted), why: expect.stringMatching(/^cancelled: the run was interrupted \(SIGTERM received by disagg-bench run\) at \S+; its job \S+ was cancelled$/) }]);

    release(gate);
    const resumed = await startRun(['--scheduler', 'local', '--output', dir.outputPath, '--resume'], dir, mark);
    expect(resumed.exitCode, String(resumed.all)).toBe(0);
    expect(String(resumed.all)).toMatch(/resume +on +\(command line\)/);
    // --resume continued the run `latest` names, in its folder, under its id.
    expect(readlinkSync(runDir)).toBe(interrupted);
    expect(readdirSync(path.join(dir.outputPath, 'runs'))).toEqual([path.basename(interrupted)]);
    expect(recordOf(readOutputs(runDir).records, testIdOf('slow'))).toMatchObject({ verdict: 'passed', run: { id: path.basename(interrupted) } });
    // Its record saved, the test has a verdict: it leaves the not-run list.
    expect(notRun()).toBeUndefined();
  });

  it('a second signal while the run is being cancelled ends it at once: the job cancelled and recorded, both tests named as not run', { timeout: 300_000 }, async () => {
    const never = releaseFile('never');
    const dir = writeWorkDir({ a_first: await standinConfig({ client: `wait:${never}` }), b_second: await standinConfig({ client: `wait:${never}` }) }, 'run-twice-');
    const mark = newMark();
    const child = startRun(['disagg', '--scheduler', 'local', '--batch-size', '1', '--output', dir.outputPath], dir, mark);
    const runDir = path.join(dir.outputPath, 'latest');
    await waitUntil('the first job to run', () => statesOf(runDir, testIdOf('a_first')).includes('RUNNING'), 240_000);
    // Back to back: whichever Node hears first starts the cancellation through Vitest, which the
    // other then finds under way (it takes IPC round trips and the tests' ends, never one handler).
    child.kill('SIGTERM');
    child.kill('SIGINT');
    const result = await child;
    const output = String(result.all);
    const first = result.exitCode === 130 ? 'SIGINT' : 'SIGTERM';
    expect([130, 143], output).toContain(result.exitCode);
    expect(output).toMatch(/(SIGINT|SIGTERM) received by disagg-bench run while the run was being cancelled: ending it at once/);
    await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
    expect(readOutputs(runDir).ledger.filter((e) => e.test === testIdOf('a_first')).at(-1)).toMatchObject({ state: 'CANCELLED', terminal: true, interrupted: true });
    expect(readOutputs(runDir).records).toEqual([]);
    const notRun = (JSON.parse(readFileSync(path.join(runDir, 'results.json'), 'utf8')) as { notRun?: { testId: string; why: string }[] }).notRun ?? [];
    expect(new Map(notRun.map((n) => [n.testId, n.why]))).toEqual(new Map([
      [testIdOf('a_first'), expect.stringMatching(new RegExp(`^cancelled: the run was interrupted \\(${first} received by disagg-bench run\\) at \\S+; its job \\S+ was cancelled$`))],
      [testIdOf('b_second'), expect.stringMatching(new RegExp(`^not reached: the run was interrupted \\(${first} received by disagg-bench run\\) at \\S+, before its job was submitted$`))],
    ]));
  });

  it('SIGHUP (its terminal gone) while a job runs ends the run at once: the job cancelled and recorded, the test named as not run, exit 129', { timeout: 300_000 }, async () => {
    const never = releaseFile('never');
    const dir = writeWorkDir({ slow: await standinConfig({ client: `wait:${never}` }) }, 'run-hup-');
    const mark = newMark();
    const child = startRun(['disagg', '--scheduler', 'local', '--output', dir.outputPath], dir, mark);
    const runDir = path.join(dir.outputPath, 'latest');
    await waitUntil('the slow job to run', () => statesOf(runDir, testIdOf('slow')).includes('RUNNING'), 240_000);
    child.kill('SIGHUP');
    const result = await child;
    const output = String(result.all);
    expect(result.exitCode, output).toBe(129);
    // Not through Vitest: a run's end written to a terminal that is gone could die half way.
    expect(output).not.toMatch(/cancelling the run's jobs and tests/);
    await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
    expect(readOutputs(runDir).ledger.at(-1)).toMatchObject({ test: testIdOf('slow'), state: 'CANCELLED', terminal: true, interrupted: true });
    const notRun = (JSON.parse(readFileSync(path.join(runDir, 'results.json'), 'utf8')) as { notRun?: { testId: string; why: string }[] }).notRun;
    expect(notRun).toEqual([{ testId: testIdOf('slow'), run: expect.any(String), why: expect.stringMatching(/^cancelled: the run was interrupted \(SIGHUP received by disagg-bench run\) at \S+; its job \S+ was cancelled$/) }]);
  });

  it('SIGTERM while the CLI is still loading: the run ends at once, nothing submitted, exit 143', { timeout: 120_000 }, async () => {
    const dir = writeWorkDir({ a: await standinConfig({ client: 'ok' }) }, 'run-early-');
    const mark = newMark();
    const child = startRun(['--scheduler', 'local', '--output', dir.outputPath], dir, mark);
    await waitUntil('bin/disagg-bench.js to hold the run\'s signals', () => binHandlesSignals(child.pid!), 30_000);
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.all)).toBe(143);
    expect(String(result.all)).toMatch(/interrupted \(SIGTERM received by disagg-bench run\) before any test was collected: nothing was submitted|no test had been collected yet: none ran/);
    expect(readOutputs(dir.outputPath).ledger).toEqual([]);
    await waitUntil('every process of the run to end', () => runProcesses(mark).length === 0, ENDS_WITHIN_MS);
  });

  it('refuses a bad command line or profile in one line, before anything runs', { timeout: 120_000 }, async () => {
    const dir = writeWorkDir({ a: await standinConfig({ client: 'ok' }) }, 'run-bad-');
    writeFileSync(path.join(dir.workDir, 'disagg-bench.yaml'), 'profiles:\n  nightly:\n    batchsize: 0\n');
    const cases: [string[], RegExp][] = [
      [['bogus'], new RegExp(`^disagg-bench run: unknown test type "bogus": expected ${testTypeNames.join(', ')}`)],
      [['--scheduler', 'pbs'], new RegExp(`^disagg-bench run: --scheduler "pbs": ${schedulerNameProblem('pbs')}`)],
      [['--profile', 'nightly'], /disagg-bench\.yaml:3:5 profiles\.nightly\.batchsize: unknown setting/],
      [['--frobnicate'], /^disagg-bench run: unknown option "--frobnicate"/],
    ];
    for (const [args, expected] of cases) {
      const result = await startRun(['--output', dir.outputPath, ...args], dir, newMark());
      expect(result.exitCode, String(result.all)).not.toBe(0);
      expect(String(result.all).trim()).toMatch(expected);
      expect(existsSync(path.join(dir.outputPath, 'runs'))).toBe(false);
    }
  });
});

describe('npx vitest run --reporter=junit (the Vitest form)', () => {
  it('still appends the history and writes report.html', { timeout: 240_000 }, async () => {
    const dir = writeWorkDir({ a: await standinConfig({ client: 'ok' }) }, 'run-junit-');
    const result = await startSuite({ ...dir, scheduler: 'local', args: ['--reporter=junit'] });
    const output = String(result.all);
    expect(result.exitCode, output).toBe(0);
    expect(output).toMatch(/<testsuites name="vitest tests" tests="1" failures="0"/);
    expect(output).toMatch(/history: 1 record\(s\), \d+ metric value\(s\) appended/);
    expect(existsSync(path.join(dir.outputPath, 'report.html'))).toBe(true);
  });
});
