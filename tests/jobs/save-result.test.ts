// One commit point per test for results.json and the CSV (framework/jobs/save-result.ts), with real
// files and, for the kill, a real process killed with SIGKILL at the two places it matters:
// after the record is written and before its rows (waiting for the CSV's lock, which this test
// holds), and after its rows and before the record is committed (waiting for results.json's lock).
// No timing: the test takes the locks and decides from what is in the files.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import lockfile from 'proper-lockfile';
import { afterAll, describe, expect, it } from 'vitest';
import { saveNoJobRecords, saveTestResult } from '../../framework/jobs/save-result.ts';
import type { PlannedTest } from '../../framework/select/plan.ts';
import type { Settings } from '../../framework/settings.ts';
import { PERF_CSV_FILE } from '../../framework/results/csv.ts';
import { readResults, RESULTS_JSON_FILE } from '../../framework/results/json.ts';
import { readResultsRecords } from '../../framework/results/report/load.ts';
import { Ledger } from '../../framework/jobs/ledger.ts';
import { planResume } from '../../framework/jobs/resume.ts';
import { readCsv } from '../../framework/results/csv-read.ts';
import { passedRun, plannedTest, saveInput } from '../fixtures/results/save-test.ts';

const dirs: string[] = [];
function outputDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'save-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const csvRows = (out: string) => readCsv(readFileSync(path.join(out, PERF_CSV_FILE), 'utf8'));
const rowsOf = (out: string, id: string) => csvRows(out).filter((r) => r.network_name.startsWith(`${id}_con:`));
const T0 = Date.parse('2026-11-25T10:00:00Z');

describe('saving a test\'s result', () => {
  it('a replay of the same job replaces its rows; another job of the test adds its own; a test whose id extends this one\'s is untouched', async () => {
    const out = outputDir();
    await saveTestResult(saveInput(out, 'foo', passedRun('101', T0)));
    await saveTestResult(saveInput(out, 'foo_bar', passedRun('102', T0))); // same second, name extends foo's
    expect(rowsOf(out, 'foo')).toHaveLength(4);
    for (const later of [T0 + 60_000, T0 + 120_000]) await saveTestResult(saveInput(out, 'foo', passedRun('101', later))); // two replays
    expect(rowsOf(out, 'foo')).toHaveLength(4);
    expect(new Set(rowsOf(out, 'foo').map((r) => r.end_timestamp))).toEqual(new Set(['2026-11-25 10:02:00']));
    expect(rowsOf(out, 'foo_bar')).toHaveLength(4);
    await saveTestResult(saveInput(out, 'foo', passedRun('201', T0 + 3_600_000))); // a new job: its rows are added
    expect(rowsOf(out, 'foo')).toHaveLength(8);
    const { records } = await readResults(out);
    expect(records.map((r) => [r.testId, r.jobId])).toEqual([['foo', '101'], ['foo_bar', '102'], ['foo', '201']]);
    // A replay that now fails takes the job's rows out.
    await saveTestResult(saveInput(out, 'foo', { ...passedRun('101', T0 + 7_200_000), passed: false, failures: ['regressed'] }));
    expect(rowsOf(out, 'foo').map((r) => r.end_timestamp)).toEqual(Array(4).fill('2026-11-25 11:00:00'));
    expect(csvRows(out).filter((r) => r.network_name === 'network_name')).toEqual([]); // one header
  });

  it('rows a version without `csvRows` wrote are found from the record\'s metrics and timing', async () => {
    const out = outputDir();
    await saveTestResult(saveInput(out, 'old', passedRun('7', T0)));
    const file = path.join(out, RESULTS_JSON_FILE);
    const data = JSON.parse(readFileSync(file, 'utf8'));
    delete data.records[0].csvRows;
    writeFileSync(file, JSON.stringify(data));
    await saveTestResult(saveInput(out, 'old', passedRun('7', T0 + 60_000)));
    expect(rowsOf(out, 'old')).toHaveLength(4);
  });

  it('a CSV that refuses the rows leaves the record failed, saying why, never passed', async () => {
    const out = outputDir();
    writeFileSync(path.join(out, PERF_CSV_FILE), 'name,value\nsomeone_else,1\n');
    await expect(saveTestResult(saveInput(out, 't', passedRun('5', T0)))).rejects.toThrow(/its header differs/);
    const [record] = (await readResults(out)).records;
    expect(record).toMatchObject({ testId: 't', jobId: '5', verdict: 'failed' });
    expect(record.failures.at(-1)).toMatch(/^its CSV rows were not written: refusing to append to .*perf_script_test_results\.csv/);
    expect(record.csvRows).toBeUndefined();
    expect(readFileSync(path.join(out, PERF_CSV_FILE), 'utf8')).toBe('name,value\nsomeone_else,1\n');
  });

  for (const cut of ['after the record, before its rows', 'after its rows, before the record is committed'] as const) {
    it(`SIGKILL ${cut}: no result is counted, RESUME judges the job again and the rows end up in the CSV once`, { timeout: 60_000 }, async () => {
      const out = outputDir();
      const csv = path.join(out, PERF_CSV_FILE);
      const results = path.join(out, RESULTS_JSON_FILE);
      const lock = (file: string) => lockfile.lock(file, { realpath: false, stale: 10_000, retries: { retries: 300, minTimeout: 5, maxTimeout: 100 } });
      await saveTestResult(saveInput(out, 'other', passedRun('1', T0))); // a result already there stays as it was
      const before = readFileSync(csv, 'utf8');

      const releaseCsv = await lock(csv);
      const worker = execa('node', ['--import', 'tsx', path.resolve(import.meta.dirname, '../fixtures/results/save-worker.ts'), out, 't', '42', String(T0)], { reject: false, all: true });
      const until = async (what: string, done: () => boolean | Promise<boolean>) => {
        while (!(await done())) {
          if (worker.exitCode !== null) throw new Error(`the worker ended before ${what}: ${(await worker).all}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      // Step 1 done, blocked on the CSV's lock.
      await until('its record was written', async () => (await readResults(out, { withSaving: true })).records.some((r) => r.testId === 't' && r.saving));
      let releaseResults: (() => Promise<void>) | undefined;
      if (cut === 'after its rows, before the record is committed') {
        releaseResults = await lock(results);
        await releaseCsv();
        await until('its rows were written', () => rowsOf(out, 't').length === 4); // step 2 done, blocked on results.json
      }
      worker.kill('SIGKILL');
      expect((await worker).signal, String((await worker).all)).toBe('SIGKILL');
      await (releaseResults ?? releaseCsv)();

      // Nobody counts the cut-short save as a result.
      expect((await readResults(out)).records.map((r) => r.testId)).toEqual(['other']);
      expect((await readResultsRecords(out)).map((r) => r.testId)).toEqual(['other']);
      const logDir = path.join(out, 'slurm_logs', 't');
      const ledger = new Ledger(out, 'run-killed', 'slurm');
      ledger.record({ test: 't', job: '42', state: 'SUBMITTED', terminal: false, logDir, timeoutSec: 60 });
      ledger.record({ test: 't', job: '42', state: 'COMPLETED', terminal: true });
      expect((await planResume(out, 'slurm', ['t'])).get('t')).toMatchObject({ kind: 'adopt', job: '42', ended: { state: 'COMPLETED' } });

      // RESUME judges the job again (later) and saves: the rows are there once, the record is the result.
      await saveTestResult(saveInput(out, 't', passedRun('42', T0 + 60_000)));
      expect(rowsOf(out, 't').map((r) => r.end_timestamp)).toEqual(Array(4).fill('2026-11-25 10:01:00'));
      expect(readFileSync(csv, 'utf8').startsWith(before)).toBe(true);
      expect((await readResults(out)).records.map((r) => [r.testId, r.verdict, r.saving])).toEqual([['other', 'passed', undefined], ['t', 'passed', undefined]]);
      expect((await planResume(out, 'slurm', ['t'])).get('t')).toMatchObject({ kind: 'recorded' });
    });
  }
});

describe('the records of tests that get no job', () => {
  const planned = (id: string, extra: Partial<PlannedTest>): PlannedTest => ({ ...plannedTest(id), ...extra });
  const issue = { file: 'test_configs/standin/perf/bad.yaml', line: 3, col: 5, path: 'benchmark.concurrency_list', message: 'expected a list, got a mapping' };

  it('an invalid config: failed with its issues, located; a skipped one: skipped with its reason; no job, no metrics, no rows', async () => {
    const out = outputDir();
    const gpu = { gpuType: 'GB200', source: 'GPU_TYPE' } as const;
    const skipped = planned('other_gpu', { skipReason: 'GPU type GB200 is not in supported_gpus [GB300]' });
    // skipped first, valid or not (as upstream): its issues are not its result
    const skippedInvalid = planned('other_gpu_bad', { skipReason: 'GPU type GB200 is not in supported_gpus [GB300]', issues: [issue] });
    await saveNoJobRecords({ outputPath: out } as Settings, gpu, [planned('bad', { issues: [issue] }), skipped, skippedInvalid]);
    const { records } = await readResults(out);
    expect(records).toEqual([
      expect.objectContaining({ testId: 'bad', jobId: null, verdict: 'failed', failures: ['test_configs/standin/perf/bad.yaml:3:5 benchmark.concurrency_list: expected a list, got a mapping'], metrics: [], gpuType: 'GB200' }),
      expect.objectContaining({ testId: 'other_gpu', jobId: null, verdict: 'skipped', failures: [], skipReason: skipped.skipReason, metrics: [] }),
      expect.objectContaining({ testId: 'other_gpu_bad', verdict: 'skipped', failures: [] }),
    ]);
    expect(records[0].skipReason).toBeUndefined();
    expect(records[0].timing.durationSec).toBe(0);
    expect(existsSync(path.join(out, PERF_CSV_FILE))).toBe(false);

    // The next run writes them again: replaced, not added; the report reader takes them.
    await saveNoJobRecords({ outputPath: out } as Settings, gpu, [skipped]);
    expect((await readResults(out)).records.map((r) => r.testId)).toEqual(['bad', 'other_gpu', 'other_gpu_bad']);
    expect((await readResultsRecords(out)).map((r) => r.verdict)).toEqual(['failed', 'skipped', 'skipped']);
    // RESUME takes no skip for a result: a test skipped before and runnable now is submitted
    expect((await planResume(out, 'slurm', ['other_gpu'])).get('other_gpu')).toEqual({ kind: 'submit' });
  });
});
