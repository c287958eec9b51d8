// Which unfinished tests of a run really did not run: a worker can die after a test's result was
// saved but before Vitest's main process heard of the test's end (found by a loaded run).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withoutResultOfRun } from '../../framework/suite/run-tests.ts';
import { isListing } from '../../framework/suite/run-project.ts';
import { LEDGER_FILE } from '../../framework/jobs/ledger.ts';
import { RESULTS_JSON_FILE, RESULTS_JSON_VERSION } from '../../framework/results/json.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'run-tests-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const submitted = (run: string, test: string, job: string) =>
  JSON.stringify({ time: '2026-11-27T12:00:00Z', run, scheduler: 'slurm', test, job, state: 'SUBMITTED', terminal: false });
const record = (testId: string, jobId: string, saving?: boolean) => ({
  testId, type: 'disagg', category: 'perf', configPath: `${testId}.yaml`, jobId, verdict: 'passed', failures: [], metrics: [],
  timing: { start: '', end: '', durationSec: 0 }, host: 'h', ...(saving ? { saving } : {}),
});

describe('withoutResultOfRun', () => {
  it('leaves out a test whose result this run saved; keeps one saved by an earlier run, one still saving and one with none', () => {
    writeFileSync(path.join(dir, LEDGER_FILE), [
      submitted('run-b', 'fast', '12'), submitted('run-b', 'slow', '13'), submitted('run-b', 'saving', '14'), submitted('run-a', 'old', '5'), submitted('run-b', 'old', '15'),
    ].join('\n') + '\n');
    writeFileSync(path.join(dir, RESULTS_JSON_FILE), JSON.stringify({
      version: RESULTS_JSON_VERSION, updated: '', records: [record('fast', '12'), record('saving', '14', true), record('old', '5')],
    }));
    expect(withoutResultOfRun(['fast', 'slow', 'saving', 'old'], dir, 'run-b')).toEqual(['slow', 'saving', 'old']);
    expect(withoutResultOfRun(['fast'], dir, undefined)).toEqual(['fast']);
    expect(withoutResultOfRun(['fast'], path.join(dir, 'missing'), 'run-b')).toEqual(['fast']);
  });
});

describe('isListing', () => {
  it("is Vitest's list command only: its collected tests are not unfinished", () => {
    expect(isListing(['/usr/bin/node', '/repo/node_modules/vitest/vitest.mjs', 'list', '--project', 'disagg'])).toBe(true);
    expect(isListing(['/usr/bin/node', '/repo/node_modules/vitest/vitest.mjs', 'run', 'list'])).toBe(false);
    expect(isListing(['/usr/bin/node', '/repo/bin/disagg-bench.js', 'list'])).toBe(false);
  });
});
