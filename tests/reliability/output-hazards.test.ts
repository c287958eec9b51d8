// What an OUTPUT_PATH can hold that a run must not trip over, end to end (`vitest run --project
// disagg`, local scheduler, stand-in serving stack): a path under /proc where mkdir -p never ends,
// files of the run that are folders, a truncated results.json, a CSV of another tool: each found
// before anything is submitted, one line naming it, exit 2. Mid-run, a file that can no longer be
// written costs only that file. Two runs of one test on one OUTPUT_PATH: the second refuses it,
// naming the first, and touches nothing of it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readLedger } from '../../framework/jobs/ledger.ts';
import {
  readOutputs, recordOf, release, releaseFile, removeWorkDirs, runSuite, standinConfig, startSuite, statesOf, testIdOf, waitUntil, writeWorkDir,
} from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

const okConfig = () => standinConfig({ client: 'ok' });

/** What OUTPUT_PATH holds: each entry's name and, for files, its content. */
const snapshot = (dir: string) =>
  readdirSync(dir, { withFileTypes: true }).map((e) => [e.name, e.isDirectory() ? 'a folder' : readFileSync(path.join(dir, e.name), 'utf8')]);

describe.concurrent('OUTPUT_PATH hazards', () => {
  it('OUTPUT_PATH=/proc/self/x: one line and exit 2, not an endless mkdir', { timeout: 120_000 }, async () => {
    const { workDir } = writeWorkDir({ fine: await okConfig() }, 'proc-output-');
    const { output, exitCode } = await runSuite({ workDir, outputPath: '/proc/self/x', scheduler: 'local' });
    expect(exitCode, output).toBe(2);
    const line = 'disagg-bench: error: OUTPUT_PATH=/proc/self/x cannot be written: /proc/self takes no new folders';
    expect(output).toContain(line);
    expect(output.split(line)).toHaveLength(2);
  });

  const refusals: Array<[string, (out: string) => void, RegExp]> = [
    ['results.json is a folder', (out) => mkdirSync(path.join(out, 'results.json')), /\/results\.json is a folder, not a file; move it aside/],
    ['results.json is cut off', (out) => writeFileSync(path.join(out, 'results.json'), '{"version": 1, "records": [{"testId": "x", "ver'), /\/results\.json: not valid JSON \([^)]*\): this run could not add its results to it/],
    ['a results.json record the report cannot read (metrics: 7)', (out) => writeFileSync(path.join(out, 'results.json'), JSON.stringify({ version: 1, updated: '', records: [{ testId: 'x', type: 'disagg', category: 'perf', configPath: 'x.yaml', jobId: '1', verdict: 'passed', failures: [], metrics: 7, timing: { start: '', end: '', durationSec: 1 }, host: 'h' }] })),
      /\/results\.json: records\[0\] metrics is 7, expected a list of metrics \(the report and the history could not read it\): this run could not add its results to it/],
    ['the CSV has another tool\'s header', (out) => writeFileSync(path.join(out, 'perf_script_test_results.csv'), 'name,value\nx,1\n'), /perf_script_test_results\.csv: its header is not this version's columns \(found: name,value\): this run could not add its rows to it/],
    ['slurm_logs is a file', (out) => writeFileSync(path.join(out, 'slurm_logs'), ''), /\/slurm_logs is a file, not a folder/],
  ];
  for (const [what, make, message] of refusals) {
    it(`${what}: found before anything is submitted, one line, exit 2, the file untouched`, { timeout: 120_000 }, async () => {
      const { workDir, outputPath } = writeWorkDir({ fine: await okConfig() }, 'refused-output-');
      mkdirSync(outputPath);
      make(outputPath);
      const before = snapshot(outputPath);
      const result = await startSuite({ workDir, outputPath, scheduler: 'local' });
      const output = String(result.all);
      expect(result.exitCode, output).toBe(2);
      const errors = output.split('\n').filter((l) => l.startsWith('disagg-bench: error: '));
      expect(errors, output).toHaveLength(1);
      expect(errors[0]).toMatch(message);
      expect(output).not.toMatch(/Unhandled|\bat .*\.ts:\d+/);
      expect(readLedger(outputPath)).toEqual([]); // nothing submitted
      const after = snapshot(outputPath);
      expect(after).toEqual(before);
    });
  }

  it('mid-run, a CSV and a report.html that became folders cost only themselves: results.json says why, the report\'s failure is one line', { timeout: 180_000 }, async () => {
    const gate = releaseFile('mid-run');
    const { workDir, outputPath } = writeWorkDir({ first: await okConfig(), second: await standinConfig({ client: `wait:${gate}` }) }, 'mid-run-output-');
    const run = startSuite({ workDir, outputPath, scheduler: 'local' });
    try {
      await waitUntil('first saved, second running', () =>
        recordOf(readOutputs(outputPath).records, testIdOf('first')) !== undefined && statesOf(outputPath, testIdOf('second')).includes('RUNNING'), 120_000);
      const csv = path.join(outputPath, 'perf_script_test_results.csv');
      writeFileSync(`${csv}.kept`, readFileSync(csv));
      // Someone replaces the CSV and the report with folders while the second job runs.
      for (const file of [csv, path.join(outputPath, 'report.html')]) {
        try {
          rmSync(file);
        } catch {
          // report.html is written at the end: not there yet
        }
        mkdirSync(file);
      }
    } finally {
      release(gate);
    }
    const result = await run;
    const output = String(result.all);
    expect(result.exitCode, output).toBe(1);
    const { records } = readOutputs(outputPath);
    expect(recordOf(records, testIdOf('first'))).toMatchObject({ verdict: 'passed' });
    const second = recordOf(records, testIdOf('second'))!;
    expect(second).toMatchObject({ verdict: 'failed', schedulerState: 'COMPLETED' });
    expect(second.failures.at(-1)).toMatch(/^its CSV rows were not written: cannot write \S+perf_script_test_results\.csv: it is a folder, not a file/);
    expect(output).toMatch(/report\.html could not be written: cannot write \S+report\.html: it is a folder, not a file/);
    expect(output).not.toMatch(/EISDIR: illegal operation/);
  });

  it('two runs of one test on one OUTPUT_PATH: the second refuses it, naming the first; its other test runs; the first is untouched', { timeout: 240_000 }, async () => {
    const gate = releaseFile('first-run');
    const shared = await standinConfig({ client: `wait:${gate}` });
    const first = writeWorkDir({ shared }, 'claims-a-');
    const second = writeWorkDir({ shared, own: await okConfig() }, 'claims-b-');
    const outputPath = first.outputPath;
    const runA = startSuite({ workDir: first.workDir, outputPath, scheduler: 'local' });
    let b: Awaited<ReturnType<typeof runSuite>>;
    try {
      await waitUntil('the first run\'s job running', () => statesOf(outputPath, testIdOf('shared')).includes('RUNNING'), 120_000);
      b = await runSuite({ workDir: second.workDir, outputPath, scheduler: 'local' });
    } finally {
      release(gate);
    }
    const a = await runA;
    expect(a.exitCode, String(a.all)).toBe(0);
    const { records, ledger } = readOutputs(outputPath);
    const runOfA = ledger.find((e) => e.test === testIdOf('shared'))!.run;
    expect(b.exitCode, b.output).toBe(1);
    expect(b.output).toMatch(new RegExp(`${testIdOf('shared')}: not run: run ${runOfA} \\(pid \\d+ on \\S+, started [^)]+\\) is running this test on OUTPUT_PATH=${outputPath.replace(/[/.]/g, '\\$&')}`));
    // The second run submitted only its own test; the first run's job, logs and record are its own.
    expect(ledger.filter((e) => e.state === 'SUBMITTED').map((e) => [e.test, e.run === runOfA])).toEqual(
      expect.arrayContaining([[testIdOf('shared'), true], [testIdOf('own'), false]]));
    expect(ledger.filter((e) => e.state === 'SUBMITTED')).toHaveLength(2);
    expect(readdirSync(path.join(outputPath, 'slurm_logs')).sort()).toEqual([testIdOf('own'), testIdOf('shared')]); // nothing moved aside
    expect(recordOf(records, testIdOf('shared'))).toMatchObject({ verdict: 'passed' });
    expect(recordOf(records, testIdOf('own'))).toMatchObject({ verdict: 'passed' });
    const runs = path.join(outputPath, 'runs');
    expect(existsSync(runs) ? readdirSync(runs).filter((f) => f.endsWith('.json')) : []).toEqual([]); // both released their claims
  });
});
