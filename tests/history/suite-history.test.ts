// The history in a real run of the suite (`vitest run --project disagg` as a child process, the
// local scheduler, a STAND-IN serving stack: the engine cannot run here, see
// tests/fixtures/reliability/suite-run.ts). Its stand-in client always gives the same numbers
// (median TTFT 20.2468 ms in its result.json, printed 20.25), so a regression is made by seeding
// the history with faster earlier days, through the store itself.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withHistory } from '../../framework/history/store.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { recordOf, removeWorkDirs, runSuite, standinConfig, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

const DAY_MS = 86_400_000;
const id = testIdOf('standin');

/** Earlier post-merge days of the same test as `record`, with the given median TTFT. */
function earlierDays(record: TestRecord, ttft: number, days: number): TestRecord[] {
  return Array.from({ length: days }, (_, k) => {
    const shift = (days - k) * DAY_MS;
    return {
      ...record,
      timing: { ...record.timing, start: new Date(Date.parse(record.timing.start) - shift).toISOString(), end: new Date(Date.parse(record.timing.end) - shift).toISOString() },
      metrics: record.metrics.map((m) => (m.name === 'SERVER_MEDIAN_TTFT' ? { ...m, value: ttft } : m)),
      run: { ...record.run!, id: `seed-${k}`, kind: 'post-merge' },
      regression: undefined,
    };
  });
}

describe('history in a run of the suite', () => {
  it('appends every run at its end, fails a regression with DISAGG_REGRESSION=fail, keeps pre-merge runs out of baselines', { timeout: 600_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ standin: await standinConfig({ client: 'ok' }) });
    const store = { kind: 'duckdb' as const, file: path.join(outputPath, 'history.duckdb') };
    // Post-merge runs (a run says so; unset it is a local run that feeds nothing); TTFT gating
    // (the serving type's headline metrics are its throughputs).
    const gate = { DISAGG_GATE_METRICS: 'headline,SERVER_MEDIAN_TTFT' };
    const postMerge = { DISAGG_RUN_KIND: 'post-merge', ...gate };

    // 0. Nothing set: a local run, recorded, feeding nothing.
    const local = await runSuite({ workDir, outputPath: `${outputPath}-local`, scheduler: 'local' });
    expect(local.exitCode, local.output).toBe(0);
    expect(recordOf(local.records, id)!.run).toMatchObject({ kind: 'local' });

    // 1. A first run: nothing to compare with; its record lands in OUTPUT_PATH/history.duckdb.
    const first = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_RUN_LABEL: 'first', ...postMerge } });
    expect(first.exitCode, first.output).toBe(0);
    expect(first.output).toMatch(/history: 1 record\(s\), \d+ metric value\(s\) appended to the DuckDB history .*history\.duckdb/);
    const firstRecord = recordOf(first.records, id)!;
    expect(firstRecord.run).toMatchObject({ kind: 'post-merge', label: 'first', identity: expect.objectContaining({ benchmark_mode: 'gen_only_no_context', gen_cache_transceiver_backend: 'DEFAULT' }) });
    expect(firstRecord.regression?.skipped).toMatch(/no (history yet|earlier post-merge history)/);
    const [stored] = await withHistory(store, (s) => s.records([firstRecord.run!.id]));
    // the figure at full precision from the client's result.json, in the history and results.json
    expect(stored.metrics.find((m) => m.name === 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 20.2468 });
    expect(stored.metrics.find((m) => m.name === 'SERVER_MEDIAN_TTFT')).not.toHaveProperty('rounded');
    expect(firstRecord.metrics.find((m) => m.name === 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 20.2468, printed: 20.25, source: 'concurrency_1/result.json median_ttft_ms' });
    // upstream's CSV keeps the print, as upstream's parser reads it
    expect(readFileSync(path.join(outputPath, 'perf_script_test_results.csv'), 'utf8')).toMatch(/,20\.25,.*,SERVER_MEDIAN_TTFT\r?\n/);

    // 2. Faster earlier days (10 ms): the next run's 20.2468 ms is a regression, and fails the test.
    await withHistory(store, (s) => s.append(earlierDays(stored, 10, 10).map((record) => ({ record, run: record.run!, source: 'seed' }))), { create: true });
    const second = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_REGRESSION: 'fail', ...postMerge } });
    expect(second.exitCode).toBe(1);
    expect(second.output).toMatch(/regression against the history: disagg_perf_standin SERVER_MEDIAN_TTFT\[concurrency=1\]: 20\.2468 ms against its level \d+\.\d+: \+\d+\.\d% worse/);
    const records = second.records.filter((r) => r.testId === id);
    const failed = records.find((r) => r.run?.id !== firstRecord.run!.id)!;
    expect(failed.verdict).toBe('failed');
    expect(failed.regression?.findings.find((f) => f.metric === 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 20.2468, regression: true, threshold: 0.05, gated: true });
    expect(failed.run?.gate).toContain('SERVER_MEDIAN_TTFT');
    expect(second.csvRows.length).toBeGreaterThan(first.csvRows.length); // its numbers are still written
    expect(second.output).toMatch(/history: 1 record\(s\)/);
    // the report's trend section charts it, the regression first
    const report = readFileSync(path.join(outputPath, 'report.html'), 'utf8');
    expect(report).toMatch(/<section id="trends"><h2>Trends against the history<\/h2>/);
    expect(report).toMatch(/<tr class="regression" data-trend="trend-1"><td class="id">disagg_perf_standin<\/td><td><code>SERVER_MEDIAN_TTFT<\/code>/);

    // 3. warn (the default for post-merge): the same regression is a warning; the test passes.
    const third = await runSuite({ workDir, outputPath, scheduler: 'local', env: postMerge });
    expect(third.exitCode, third.output).toBe(0);
    expect(third.output).toMatch(/warning: regression against the history: disagg_perf_standin SERVER_MEDIAN_TTFT/);

    // 4. pre-merge: would fail by default (upstream's fail_on_regression for pre-merge), but it is
    // judged against the baseline branch's current level, which has the same regression (an alert
    // open since run 2): not this change's. Kept in the history without feeding later baselines.
    const fourth = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_RUN_KIND: 'pre-merge', ...gate } });
    expect(fourth.exitCode, fourth.output).toBe(0);
    const exempt = recordOf(fourth.records.filter((r) => r.run?.kind === 'pre-merge'), id)!.regression?.findings.find((f) => f.metric === 'SERVER_MEDIAN_TTFT');
    expect(exempt).toMatchObject({ value: 20.2468, regression: false, threshold: 0.1 });
    expect(exempt?.note).toMatch(/at or better than its level|within the (threshold|noise)/);
    expect(exempt?.baseline).toBeCloseTo(20.2468, 3); // the branch's current level, not the level before the alert
    const runs = await withHistory(store, (s) => s.runs());
    expect(runs.filter((r) => r.kind === 'pre-merge')).toHaveLength(1);
    const points = await withHistory(store, (s) => s.points({ testIds: [id], metric: 'SERVER_MEDIAN_TTFT' }));
    const fourthRun = recordOf(fourth.records.filter((r) => r.run?.kind === 'pre-merge'), id)!.run!.id;
    // runs 1-3 feed baselines (the regression-failed run 2 still measured truly), run 4 does not
    expect(points.filter((p) => p.tsMs > Date.now() - DAY_MS).map((p) => [p.runKind, p.postMerge && p.valid])).toEqual([
      ['post-merge', true],
      ['post-merge', true],
      ['post-merge', true],
      ['pre-merge', false],
    ]);
    expect(points.at(-1)!.runId).toBe(fourthRun);
  });

  it('writes the run\'s own results when the store is broken or unreachable, and says so in one line', { timeout: 300_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ standin: await standinConfig({ client: 'ok' }), standin2: await standinConfig({ client: 'ok' }) });
    const corrupt = path.join(path.dirname(outputPath), 'corrupt.duckdb');
    writeFileSync(corrupt, 'this is not a database\n'.repeat(200));
    const broken = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_HISTORY: corrupt, DISAGG_REGRESSION: 'fail' } });
    expect(broken.exitCode, broken.output).toBe(0);
    expect(recordOf(broken.records, id)?.verdict).toBe('passed');
    expect(recordOf(broken.records, testIdOf('standin2'))?.verdict).toBe('passed');
    expect(broken.csvRows.length).toBeGreaterThan(0);
    expect(broken.output).toMatch(/history: nothing appended: the DuckDB history .*corrupt\.duckdb: the file is not a DuckDB database .*; move .* aside/);

    const unreachable = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_HISTORY: 'postgres://nobody@127.0.0.1:1/history', DISAGG_HISTORY_CONNECT_TIMEOUT_SEC: '3' } });
    expect(unreachable.exitCode, unreachable.output).toBe(0);
    // a server out of reach: the records are kept aside for the next run or `history import`
    expect(unreachable.output).toMatch(/history: \d+ record\(s\) kept in \S+history-pending\.jsonl \(appended by the next run or `disagg-bench history import`\): no server answers there/);
    // the store is tried by the first test to finish, not again by the other
    expect(unreachable.output.match(/not checked against the history/g)).toHaveLength(1);
    const skipped = unreachable.records.filter((r) => r.regression?.skipped?.includes('no server answers there'));
    expect(new Set(skipped.map((r) => r.testId))).toEqual(new Set([id, testIdOf('standin2')]));
    expect(existsSync(path.join(outputPath, 'history.duckdb'))).toBe(false);

    // DISAGG_HISTORY=off: nothing checked, nothing appended, no store made; each record still
    // carries its run (what `history import` keeps), marked as one no run's end appends.
    const off = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_HISTORY: 'off' } });
    expect(off.exitCode, off.output).toBe(0);
    expect(off.output).not.toMatch(/history:/);
    expect(existsSync(path.join(outputPath, 'history.duckdb'))).toBe(false);
    const offRecords = off.records.filter((r) => r.run?.notAppended);
    expect(offRecords.map((r) => r.testId).sort()).toEqual([id, testIdOf('standin2')].sort());
    expect(new Set(offRecords.map((r) => r.run!.id)).size).toBe(1);
    expect(offRecords[0].run).toMatchObject({ kind: 'local', notAppended: 'its run kept no history (DISAGG_HISTORY=off)' });
    expect(offRecords[0].regression).toBeUndefined();

    // The next run that reaches a store appends the first two runs' records too: nothing was lost
    // (the off run's records are left out).
    const next = await runSuite({ workDir, outputPath, scheduler: 'local' });
    expect(next.output).toMatch(/history: 6 record\(s\)/); // two tests x (broken, unreachable, this run)
  });
});
