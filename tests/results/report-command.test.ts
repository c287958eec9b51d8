import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../framework/commands/report.ts';
import { readResultsRecords, ResultsInputError } from '../../framework/results/report/load.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { baselineRecords, FIXTURE_FILE, fixtureRecords, ids } from '../fixtures/report/fixture.ts';

let dir: string;
let printed: string[];
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'report-command-'));
  printed = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const writeResults = async (name: string, records: TestRecord[], version = 1) => {
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify({ version, updated: '2025-11-03T12:00:00.000Z', records }));
  return file;
};
const tableRows = (html: string) => [...html.matchAll(/<tr class="row-(\w+)" data-test="([^"]*)"/g)].map((m) => `${m[2]}:${m[1]}`);

describe('disagg-bench report', () => {
  it('rebuilds report.html next to its input from results alone', async () => {
    const input = await writeResults('results.json', fixtureRecords());
    expect(await run([input])).toBe(0);
    const html = await readFile(path.join(dir, 'report.html'), 'utf8');
    expect(tableRows(html)).toHaveLength(9);
    expect(printed).toEqual([`${path.join(dir, 'report.html')}: 11 plot(s) over 6 test(s)`]);
    expect((await readdir(dir)).sort()).toEqual(['report.html', 'results.json']); // no temporary file left
  });

  it('merges several results files; the later one wins on the same test and job', async () => {
    const [first, second] = fixtureRecords();
    const rerun = { ...first, verdict: 'failed' as const, failures: ['rerun failed'] };
    const a = await writeResults('a.json', [first, second]);
    const b = await writeResults('b.json', [rerun, { ...first, jobId: '99999' }]);
    const out = path.join(dir, 'merged.html');
    expect(await run([a, b, '--output', out])).toBe(0);
    expect(tableRows(await readFile(out, 'utf8'))).toEqual([`${first.testId}:failed`, `${second.testId}:passed`, `${first.testId}:passed`]);
  });

  it('reads a folder as its results.json, and OUTPUT_PATH when given no input', async () => {
    await writeResults('results.json', fixtureRecords().slice(0, 2));
    const previous = process.env.OUTPUT_PATH;
    process.env.OUTPUT_PATH = dir;
    try {
      expect(await run([])).toBe(0);
    } finally {
      if (previous === undefined) delete process.env.OUTPUT_PATH;
      else process.env.OUTPUT_PATH = previous;
    }
    expect(tableRows(await readFile(path.join(dir, 'report.html'), 'utf8'))).toHaveLength(2);
  });

  it('compares with --baseline, and fails on a regression only when asked to', async () => {
    const old = await writeResults('old.json', baselineRecords());
    const out = path.join(dir, 'report.html');
    expect(await run([FIXTURE_FILE, '--baseline', old, '--output', out])).toBe(0);
    expect(printed[1]).toMatch(/^baseline: \d+ metric\(s\) compared, 2 regression\(s\), 1 improvement\(s\)$/);
    const html = await readFile(out, 'utf8');
    expect(html).toContain(`<tr class="regression" data-test="${ids.disagg}" data-metric="SERVER_MEDIAN_TTFT">`);
    expect(await run([FIXTURE_FILE, '-b', old, '-o', out, '--fail-on-regression'])).toBe(1);
    expect(await run([FIXTURE_FILE, '-b', old, '-o', out, '--fail-on-regression', '--threshold', '20'])).toBe(0);
  });

  it('names the file and what is wrong in its errors', async () => {
    const missing = path.join(dir, 'nope.json');
    await expect(run([missing])).rejects.toThrow(new ResultsInputError(missing, 'no such file or folder'));
    await expect(run([FIXTURE_FILE, '--threshold', 'five'])).rejects.toThrow('--threshold "five": expected a percentage >= 0');
  });
});

describe('reading results files', () => {
  it('refuses a file that is not JSON, of another version, or with a record lacking what the report reads', async () => {
    const notJson = path.join(dir, 'bad.json');
    await writeFile(notJson, '{"version": 1, "records": [');
    await expect(readResultsRecords(notJson)).rejects.toThrow(new RegExp(`^${notJson}: not readable as JSON`));
    await expect(readResultsRecords(await writeResults('v2.json', [], 2))).rejects.toThrow('v2.json: version 2 is not the supported version 1');
    const broken = fixtureRecords();
    (broken[3].metrics[2] as { value: unknown }).value = 'fast';
    const error = await readResultsRecords(await writeResults('broken.json', broken)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResultsInputError);
    expect((error as Error).message).toMatch(/broken\.json: records\[3\] metrics\[2\]\.value is "fast", expected a number$/);
  });
});
