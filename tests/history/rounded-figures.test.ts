// A figure printed rounded (Metric.rounded) in the tools that judge the history: the gate, bisect
// and the comparisons leave a print of zero out as no measurement and say so once; a breach that
// the print's rounding alone explains is no regression. Records as results.json holds them; the
// bisection's ends read from a real DuckDB history.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRecord, unmeasuredLine } from '../../framework/history/regression.ts';
import type { SeriesStats } from '../../framework/history/gate.ts';
import { judgeEnds, pooledNoise } from '../../framework/history/bisect/step-verdict.ts';
import { metricValueOf } from '../../framework/history/bisect/step-run.ts';
import { describeReference, runReference } from '../../framework/history/bisect/references.ts';
import { compareRuns, unmeasuredComparisonLine } from '../../framework/history/compare-runs.ts';
import { compareBackends, rowsOfRecords } from '../../framework/history/compare-backends.ts';
import { withHistory } from '../../framework/history/store.ts';
import type { Metric } from '../../framework/metrics/metric.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { entry, record } from '../fixtures/history/records.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'rounded-figures-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const labels = { concurrency: 8 };
/** A transfer figure printed with 2 decimals. */
const bandwidth = (value: number): Metric => ({ name: 'BW_GBPS', value, unit: 'GB/s', higherIsBetter: true, labels, rounded: 0.01 });

/** Baselines for every series: a steady history of `level`. */
function steadyHistory(level: number): Map<number, SeriesStats> {
  const stats: SeriesStats = { seriesId: 0, p95: level, p5: level, median: level, sd: 0, days: 10, historyValues: 10, lastDay: level };
  return new (class extends Map<number, SeriesStats> {
    override get = () => stats;
  })();
}

const check = (r: TestRecord, level: number) =>
  checkRecord({ record: r, baselines: steadyHistory(level), runKind: 'post-merge', gate: ['BW_GBPS', 'SERVER_MEDIAN_TTFT', 'SERVER_OUTPUT_TOKEN_THROUGHPUT'] });

describe('the regression gate and a rounded figure', () => {
  it('does not judge a print of zero, and names it once', () => {
    const r = record({ runId: 'r', day: 1, extra: [bandwidth(0)] });
    const outcome = check(r, 2);
    expect(outcome.findings.map((f) => f.metric)).not.toContain('BW_GBPS');
    expect(outcome.unmeasured).toEqual(['BW_GBPS[concurrency=8]']);
    expect(unmeasuredLine([{ testId: r.testId, ...outcome }])).toBe(
      '1 figure(s) printed rounded to zero, not judged (no measurement): disagg_perf_model_1k1k_ccb-UCX BW_GBPS[concurrency=8]',
    );
    // an exact zero is a measurement (a stalled transfer): judged, a regression
    const exact = check(record({ runId: 'e', day: 1, extra: [{ ...bandwidth(0), rounded: undefined }] }), 2);
    expect(exact.findings.find((f) => f.metric === 'BW_GBPS')).toMatchObject({ value: 0, regression: true });
    expect(exact.unmeasured).toBeUndefined();
  });

  it('says why nothing was judged when every figure was a print of zero', () => {
    const r: TestRecord = { ...record({ runId: 'z', day: 1 }), metrics: [bandwidth(0)] };
    expect(check(r, 2)).toMatchObject({ findings: [], skipped: 'every metric with a direction was printed rounded to zero: no measurement' });
  });

  it('finds no regression in a breach that half a step of rounding undoes, and one beyond it', () => {
    // 0.09 printed: the truth may be 0.095, within 5 % of 0.1
    const within = check(record({ runId: 'w', day: 1, extra: [bandwidth(0.09)] }), 0.1).findings.find((f) => f.metric === 'BW_GBPS');
    expect(within).toMatchObject({ regression: false, note: expect.stringMatching(/^within the print's rounding: printed to 0\.01, the value may be 0\.095/) });
    // the same breach measured exactly is a regression
    const exact = check(record({ runId: 'x', day: 1, extra: [{ ...bandwidth(0.09), rounded: undefined }] }), 0.1).findings.find((f) => f.metric === 'BW_GBPS');
    expect(exact).toMatchObject({ regression: true });
    // 0.08 printed: at best 0.085, still 15 % below
    expect(check(record({ runId: 'y', day: 1, extra: [bandwidth(0.08)] }), 0.1).findings.find((f) => f.metric === 'BW_GBPS')).toMatchObject({ regression: true });
  });
});

describe('history regressions and a rounded figure (the real bin, a real DuckDB file)', () => {
  it('judges the exact figures, leaves a print of zero out, and says so in one line', async () => {
    const env = { DISAGG_GATE_RULE: 'upstream', DISAGG_HISTORY: path.join(scratch, 'regressions.duckdb'), OUTPUT_PATH: path.join(scratch, 'out'), WORK_DIR: root };
    const cli = (...args: string[]) => execa('node', [path.join(root, 'bin/disagg-bench.js'), 'history', ...args], { cwd: scratch, env, reject: false, all: true });
    const file = (name: string, records: TestRecord[]) => {
      writeFileSync(path.join(scratch, name), JSON.stringify({ version: 1, updated: new Date().toISOString(), records }));
      return path.join(scratch, name);
    };
    const gated = (r: TestRecord): TestRecord => ({ ...r, run: { ...r.run!, gate: ['BW_GBPS', 'SERVER_MEDIAN_TTFT'] } });
    const days = [0, 1, 2, 3, 4].map((d) => gated(record({ runId: `day${d}`, day: d, extra: [bandwidth(2)] })));
    expect((await cli('import', file('days.json', days))).exitCode).toBe(0);
    const zero = file('zero.json', [gated(record({ runId: 'zero', day: 6, extra: [bandwidth(0)] }))]);
    const judged = await cli('regressions', zero, '--all');
    expect(judged.exitCode, judged.all).toBe(0); // a 0.00 is no -100 % regression
    expect(judged.stdout).toMatch(/^ok {2}disagg_perf_model_1k1k_ccb-UCX SERVER_MEDIAN_TTFT\[concurrency=8\]/m);
    expect(judged.stdout).not.toMatch(/BW_GBPS.*value=/);
    expect(judged.stdout.match(/printed rounded to zero/g)).toHaveLength(1);
    expect(judged.stdout).toContain('1 figure(s) printed rounded to zero, not judged (no measurement): disagg_perf_model_1k1k_ccb-UCX BW_GBPS[concurrency=8]');
    const json = JSON.parse((await cli('regressions', zero, '--json')).stdout);
    expect(json.unmeasured).toEqual([{ testId: 'disagg_perf_model_1k1k_ccb-UCX', metric: 'BW_GBPS[concurrency=8]' }]);
  });
});

describe('bisect and a rounded figure', () => {
  it('takes no value from a print of zero: the step is skipped saying why', () => {
    const r = record({ runId: 'b', day: 1, extra: [bandwidth(0)] });
    expect(metricValueOf(r, { name: 'BW_GBPS' })).toEqual({ why: 'BW_GBPS[concurrency=8] was printed rounded to zero (<0.01): no measurement', unmeasured: true });
    expect(metricValueOf(record({ runId: 'c', day: 1, extra: [bandwidth(0.5)] }), { name: 'BW_GBPS' })).toEqual({ value: 0.5, higherIsBetter: true, rounded: 0.01 });
  });

  it('judges the ends of a bisection as the gate does: a change within the rounding is no regression', () => {
    const [good, bad] = [[0.1, 0.1, 0.1], [0.09, 0.09, 0.09]];
    const noise = pooledNoise([good, bad]);
    expect(judgeEnds(good, bad, noise, true, 0.05).kind).toBe('regression');
    const rounded = judgeEnds(good, bad, noise, true, 0.05, 0.01);
    expect(rounded).toMatchObject({ kind: 'none', why: expect.stringContaining("within the print's rounding") });
  });

  it('refuses a run whose figure is a print of zero as an end, and leaves such repeats out, said once', async () => {
    const target = { kind: 'duckdb' as const, file: path.join(scratch, 'bisect.duckdb') };
    const atCommit = (runId: string, day: number, bw: number) => {
      const r = record({ runId, day, extra: [bandwidth(bw)] });
      return { ...r, run: { ...r.run!, commit: 'a'.repeat(40) } };
    };
    const runs = [atCommit('good-1', 1, 2.5), atCommit('good-2', 2, 0), atCommit('good-3', 3, 2.4), atCommit('zero', 4, 0)];
    await withHistory(target, (store) => store.append(runs.map(entry)), { create: true });
    const metric = { name: 'BW_GBPS' };
    const good = await withHistory(target, (store) => runReference(store, 'good', 'good-1', runs[0].testId, metric));
    expect(good).toMatchObject({ values: [2.5, 2.4], rounded: 0.01, unmeasuredRepeats: 2 });
    expect(describeReference(good, metric)).toMatch(/; 2 run\(s\) at the same commit left out: printed rounded to zero, no measurement$/);
    await expect(withHistory(target, (store) => runReference(store, 'bad', 'zero', runs[0].testId, metric))).rejects.toThrow(
      /--metric: in run zero, disagg_perf_model_1k1k_ccb-UCX BW_GBPS\[concurrency=8\] was printed rounded to zero \(<0\.01\): no measurement/,
    );
  });
});

describe('comparisons and a rounded figure', () => {
  it('history compare leaves a print of zero empty, with no change, and names it once', () => {
    const a = [record({ runId: 'a', day: 1, extra: [bandwidth(2)] })];
    const b = [record({ runId: 'b', day: 2, extra: [bandwidth(0)] })];
    const c = compareRuns(a, b, ['A', 'B']);
    const column = (group: number) => 2 + group * c.metricHeader.slice(2).length / 3 + c.metricHeader.slice(2).indexOf('BW_GBPS');
    expect(c.rows[0][column(0)]).toBe('2.0000');
    expect(c.rows[0][column(1)]).toBe('');
    expect(c.rows[0][column(2)]).toBe(''); // not -100.00
    expect(unmeasuredComparisonLine(c)).toBe('1 value(s) printed rounded to zero, left empty (no measurement): B: disagg_perf_model_1k1k_ccb-UCX BW_GBPS[concurrency=8]');
    expect(unmeasuredComparisonLine(compareRuns(a, a, ['A', 'A']))).toBeUndefined();
  });

  it('history compare-backends does not fail a UCX print of zero, and counts the pair apart', () => {
    const side = (backend: string, bw: number) => record({ runId: backend, day: 1, testId: `disagg_perf_model_1k1k_ccb-${backend}`, extra: [bandwidth(bw)] });
    const result = compareBackends(rowsOfRecords([side('NIXL', 2), side('UCX', 0)]));
    expect(result.pairs.map((p) => p.metric)).not.toContain('BW_GBPS');
    expect(result.unmeasuredSkipped).toBe(1);
    // measured exactly, the same zero fails as upstream fails it
    const exact = compareBackends(rowsOfRecords([side('NIXL', 2), { ...side('UCX', 0), metrics: [{ ...bandwidth(0), rounded: undefined }] }]));
    expect(exact.pairs.find((p) => p.metric === 'BW_GBPS')).toMatchObject({ status: 'Fail' });
  });
});
