// results.json's not-run list, on files: who writes what (a run replaces its own word and any
// earlier run's word on its tests, keeps other runs' entries), a saved record takes its test off the
// list, and why each test is named (its job cancelled, ended unsaved, or never submitted), read
// from the run's ledger.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { saveNotRunSync } from '../../framework/results/not-run.ts';
import { saveTestRecord, type ResultsFile, type TestRecord } from '../../framework/results/json.ts';
import { Ledger } from '../../framework/jobs/ledger.ts';
import { recordNotRunSync, whyNotRun } from '../../framework/suite/not-run.ts';
import type { Digest } from '../../framework/results/digest/digest.ts';

const folders: string[] = [];
afterEach(() => {
  for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true });
});

function folder(): string {
  const f = mkdtempSync(path.join(tmpdir(), 'not-run-list-'));
  folders.push(f);
  return f;
}

const read = (f: string) => JSON.parse(readFileSync(path.join(f, 'results.json'), 'utf8')) as ResultsFile;

function record(testId: string, run: string): TestRecord {
  return {
    testId, type: 'disagg', category: 'perf', configPath: `test_configs/disagg/perf/${testId}.yaml`, jobId: '7', verdict: 'passed', failures: [], metrics: [],
    timing: { start: '2026-11-28T19:00:00.000Z', end: '2026-11-28T19:01:00.000Z', durationSec: 60 }, host: 'h', run: { id: run, kind: 'local' },
  };
}

describe('results.json notRun', () => {
  it('a run replaces its own list and earlier runs\' word on its tests, and keeps other runs\' entries', () => {
    const f = folder();
    saveNotRunSync(f, 'run-a', [{ testId: 't1', why: 'a1' }, { testId: 't2', why: 'a2' }]);
    expect(read(f)).toMatchObject({ version: 1, records: [], notRun: [{ testId: 't1', run: 'run-a', why: 'a1' }, { testId: 't2', run: 'run-a', why: 'a2' }] });
    saveNotRunSync(f, 'run-b', [{ testId: 't2', why: 'b2' }, { testId: 't3', why: 'b3' }]);
    expect(read(f).notRun).toEqual([{ testId: 't1', run: 'run-a', why: 'a1' }, { testId: 't2', run: 'run-b', why: 'b2' }, { testId: 't3', run: 'run-b', why: 'b3' }]);
    saveNotRunSync(f, 'run-b', [{ testId: 't3', why: 'again' }]);
    expect(read(f).notRun).toEqual([{ testId: 't1', run: 'run-a', why: 'a1' }, { testId: 't3', run: 'run-b', why: 'again' }]);
  });

  it('a saved record takes its test off the list; a test with a record of the run is never listed', async () => {
    const f = folder();
    saveNotRunSync(f, 'run-a', [{ testId: 't1', why: 'cut' }, { testId: 't2', why: 'cut' }]);
    await saveTestRecord(f, record('t1', 'run-b'));
    expect(read(f).notRun).toEqual([{ testId: 't2', run: 'run-a', why: 'cut' }]);
    expect(read(f).records.map((r) => r.testId)).toEqual(['t1']);
    saveNotRunSync(f, 'run-b', [{ testId: 't1', why: 'listed by mistake' }]);
    expect(read(f).notRun).toEqual([{ testId: 't2', run: 'run-a', why: 'cut' }]);
    await saveTestRecord(f, record('t2', 'run-c'));
    expect(read(f).notRun).toBeUndefined();
  });

  it('why: the job cancelled, the job ended with no result saved, or not reached (no job of this run)', () => {
    const f = folder();
    const mine = new Ledger(f, 'run-a', 'local');
    mine.record({ test: 'cancelled', job: 'L1', state: 'SUBMITTED', terminal: false });
    mine.record({ test: 'cancelled', job: 'L1', state: 'CANCELLED', terminal: true, interrupted: true });
    mine.record({ test: 'ended', job: 'L2', state: 'COMPLETED', terminal: true });
    // Another run's job of the same test is not this run's.
    new Ledger(f, 'run-old', 'local').record({ test: 'unreached', job: 'L0', state: 'COMPLETED', terminal: true });
    const at = new Date('2026-11-28T19:40:00.000Z');
    const why = whyNotRun(['cancelled', 'ended', 'unreached'], f, 'run-a', 'the run was interrupted (SIGTERM received by disagg-bench run)', at);
    expect(Object.fromEntries(why)).toEqual({
      cancelled: 'cancelled: the run was interrupted (SIGTERM received by disagg-bench run) at 2026-11-28T19:40:00.000Z; its job L1 was cancelled',
      ended: 'the run was interrupted (SIGTERM received by disagg-bench run) at 2026-11-28T19:40:00.000Z: its job L2 ended COMPLETED but its result was not saved',
      unreached: 'not reached: the run was interrupted (SIGTERM received by disagg-bench run) at 2026-11-28T19:40:00.000Z, before its job was submitted',
    });
  });

  it('recordNotRunSync writes the list and a digest that names the same tests not run', async () => {
    const f = folder();
    await saveTestRecord(f, record('done', 'run-a'));
    const notRun = new Map([['cut', 'cancelled: because']]);
    expect(recordNotRunSync(f, 'run-a', ['done', 'cut'], notRun)).toBeUndefined();
    expect(read(f).notRun).toEqual([{ testId: 'cut', run: 'run-a', why: 'cancelled: because' }]);
    const digest = JSON.parse(readFileSync(path.join(f, 'summary.json'), 'utf8')) as Digest;
    expect(digest.tests.map((t) => [t.testId, t.verdict, t.failures])).toEqual([['done', 'passed', []], ['cut', 'not run', ['cancelled: because']]]);
    expect(digest.totals).toMatchObject({ tests: 2, passed: 1, notRun: 1 });
    expect(readFileSync(path.join(f, 'summary.md'), 'utf8')).toMatch(/cut/);
  });
});
