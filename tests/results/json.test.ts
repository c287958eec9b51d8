import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkResultsText, holdsResult, readResults, RESULTS_JSON_FILE, ResultsFileError, saveTestRecord, saveTestRecords, type TestRecord } from '../../framework/results/json.ts';

const record = (testId: string, jobId: string | null, verdict: TestRecord['verdict'] = 'passed'): TestRecord => ({
  testId,
  type: 'disagg',
  category: 'perf',
  configPath: `test_configs/disagg/perf/${testId}.yaml`,
  jobId,
  schedulerState: 'COMPLETED',
  verdict,
  failures: verdict === 'failed' ? ['concurrency 16: no result in the benchmark log'] : [],
  metrics: [{ name: 'SERVER_MEDIAN_TTFT', value: 198.43, unit: 'ms', higherIsBetter: false, labels: { concurrency: 8 } }],
  timing: { start: '2025-10-31T00:53:53.000Z', end: '2025-10-31T01:05:36.296Z', durationSec: 703.296 },
  host: 'login-01',
  gpuType: 'GB200',
});

let out: string;
beforeEach(async () => {
  out = await mkdtemp(path.join(tmpdir(), 'results-json-'));
});
afterEach(() => rm(out, { recursive: true, force: true }));

describe('results.json', () => {
  it('a file whose records are valid but whose notRun or updated is not what writers read back is refused before anything runs, naming the part', () => {
    const valid = { version: 1, updated: '2026-01-01T00:00:00.000Z', records: [record('a', '101')] };
    expect(() => checkResultsText('r.json', JSON.stringify(valid))).not.toThrow();
    expect(() => checkResultsText('r.json', JSON.stringify({ ...valid, notRun: [{ testId: 'b', run: 'run-1', why: 'cancelled' }] }))).not.toThrow();
    const cases: Array<[unknown, RegExp]> = [
      [{ ...valid, notRun: 7 }, /^r\.json: notRun is 7: expected a list of \{testId, run, why\}/],
      [{ ...valid, notRun: [{ testId: 'b' }] }, /^r\.json: notRun\[0\] is \{"testId":"b"\}: expected/],
      [{ ...valid, notRun: ['b'] }, /notRun\[0\] is "b"/],
      [{ ...valid, updated: 5 }, /^r\.json: updated is 5: expected a date as text/],
    ];
    for (const [file, expected] of cases) {
      expect(() => checkResultsText('r.json', JSON.stringify(file))).toThrow(ResultsFileError);
      expect(() => checkResultsText('r.json', JSON.stringify(file))).toThrow(expected);
    }
  });

  it('starts empty and keeps every record with its metrics', async () => {
    expect((await readResults(out)).records).toEqual([]);
    await saveTestRecord(out, record('a', '101'));
    await saveTestRecord(out, record('b', '102', 'failed'));
    const file = await readResults(out);
    expect(file.version).toBe(1);
    expect(file.updated).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(file.records).toEqual([record('a', '101'), record('b', '102', 'failed')]);
  });

  it('replaces the record of the same test and job, adds one for a new job', async () => {
    await saveTestRecord(out, record('a', '101'));
    await saveTestRecord(out, record('a', '101', 'failed'));
    await saveTestRecord(out, record('a', null, 'skipped'));
    await saveTestRecord(out, record('a', '205'));
    const { records } = await readResults(out);
    expect(records.map((r) => [r.jobId, r.verdict])).toEqual([
      ['101', 'failed'],
      [null, 'skipped'],
      ['205', 'passed'],
    ]);
  });

  it('saves several records in one write, replacing those of the same test and job', async () => {
    await saveTestRecord(out, record('a', null, 'skipped'));
    await saveTestRecords(out, [record('a', null, 'failed'), record('b', null, 'skipped'), record('c', '7')]);
    const { records } = await readResults(out);
    expect(records.map((r) => [r.testId, r.jobId, r.verdict])).toEqual([['a', null, 'failed'], ['b', null, 'skipped'], ['c', '7', 'passed']]);
    expect(records.filter(holdsResult).map((r) => r.testId)).toEqual(['a', 'c']); // a skip holds no result
  });

  it('loses no record when many tests save at once, and leaves no temporary file', async () => {
    await Promise.all(Array.from({ length: 25 }, (_, i) => saveTestRecord(out, record(`t${i}`, String(i)))));
    const { records } = await readResults(out);
    expect(records.map((r) => r.testId).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`).sort());
    expect(await readdir(out)).toEqual([RESULTS_JSON_FILE]);
  });

  it('refuses to overwrite a file it cannot read', async () => {
    const file = path.join(out, RESULTS_JSON_FILE);
    for (const content of ['{"version": 1, "records": [', '{"version": 7, "records": []}', '{"records": {}}']) {
      await writeFile(file, content);
      const error = await saveTestRecord(out, record('a', '1')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ResultsFileError);
      expect((error as Error).message).toMatch(/the file was not modified/);
      expect(await readFile(file, 'utf8')).toBe(content);
    }
  });
});
