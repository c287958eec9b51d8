// A results.json record is checked as its readers read it, before a run submits anything: a record
// the report cannot take (`metrics: 7`) would otherwise let every job run and then leave this run,
// and every later one on the same OUTPUT_PATH, without a report.html.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkResultsText } from '../../framework/results/json.ts';
import { recordProblem } from '../../framework/results/record-check.ts';
import { readResultsRecords } from '../../framework/results/report/load.ts';
import { checkOutputPath } from '../../framework/suite/output-path.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'record-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const good = {
  testId: 'disagg_perf_x', type: 'disagg', category: 'perf', configPath: 'test_configs/disagg/perf/x.yaml', jobId: '12', verdict: 'passed', failures: [],
  metrics: [{ name: 'SERVER_MEDIAN_TTFT', value: 1.5, unit: 'ms', labels: { concurrency: 8 } }],
  timing: { start: '2026-11-28T10:00:00.000Z', end: '2026-11-28T10:10:00.000Z', durationSec: 600 }, host: 'node1',
};
const file = (records: unknown[]) => JSON.stringify({ version: 1, updated: '', records });

describe('a results.json record, as the readers read it', () => {
  it('a record the run wrote itself passes', () => {
    expect(recordProblem(good)).toBeUndefined();
    expect(recordProblem({ ...good, jobId: null, verdict: 'skipped', skipReason: 'GPU', run: { id: 'r', kind: 'post-merge' }, regression: { mode: 'warn', findings: [] } })).toBeUndefined();
  });

  it('each field a reader takes, of another type, is named with what was expected', () => {
    expect(recordProblem({ ...good, metrics: 7 })).toBe('metrics is 7, expected a list of metrics');
    expect(recordProblem({ ...good, verdict: 'ok' })).toBe('verdict is "ok", expected "passed", "failed" or "skipped"');
    expect(recordProblem({ ...good, metrics: [{ ...good.metrics[0], labels: { concurrency: [8] } }] })).toBe('metrics[0].labels.concurrency is [8], expected a string or a number');
    expect(recordProblem({ ...good, timing: { start: 0, end: 1, durationSec: 1 } })).toBe('timing.start and timing.end must be strings (ISO 8601 times)');
    expect(recordProblem({ ...good, failures: 'x' })).toBe('failures is "x", expected a list of strings');
    expect(recordProblem(null)).toBe('is null, not an object');
  });

  it('the check before submission refuses the file naming the record; the report names the same', async () => {
    const text = file([good, { ...good, testId: 'y', metrics: 7 }]);
    expect(() => checkResultsText('results.json', text)).toThrow(
      'results.json: records[1] metrics is 7, expected a list of metrics (the report and the history could not read it); the file was not modified',
    );
    const out = path.join(dir, 'out');
    checkOutputPath(out);
    writeFileSync(path.join(out, 'results.json'), text);
    expect(() => checkOutputPath(out)).toThrow(/\/results\.json: records\[1\] metrics is 7, expected a list of metrics \(the report and the history could not read it\): this run could not add its results to it; move it aside/);
    expect(readFileSync(path.join(out, 'results.json'), 'utf8')).toBe(text);
    await expect(readResultsRecords(out)).rejects.toThrow(/results\.json: records\[1\] metrics is 7, expected a list of metrics$/);
  });
});
