// The history's variables, read with the run's other settings: defaults, each form of
// DISAGG_HISTORY, and one line per wrong value (the run stops before submitting anything).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSettings, SettingsError } from '../../framework/settings.ts';

const read = (env: Record<string, string>) => readSettings({ OUTPUT_PATH: '/tmp/out', ...env }).history;

describe('history settings', () => {
  it('defaults: a DuckDB file in OUTPUT_PATH, a local run that feeds nothing, warn, the robust gate on headline figures', () => {
    expect(read({})).toEqual({
      target: { kind: 'duckdb', file: '/tmp/out/history.duckdb' },
      runKind: 'local',
      regression: 'warn',
      thresholdPercent: undefined,
      runLabel: undefined,
      gate: { metrics: ['headline'], rule: 'robust', alpha: 0.05, minRuns: 5, minDays: 3, noiseK: 2.75, branch: undefined, baselineBranch: 'main', lockWaitSec: 30 },
    });
  });

  it('the gate: rule, alpha, minimum runs, metrics, minimum days, noise factor, branches, lock wait', () => {
    expect(read({ DISAGG_GATE_RULE: 'upstream', DISAGG_GATE_ALPHA: '0.01', DISAGG_GATE_MIN_RUNS: '8', DISAGG_GATE_METRICS: 'headline, SERVER_MEDIAN_TPOT,-SERVER_MEDIAN_TTFT', DISAGG_GATE_MIN_DAYS: '1', DISAGG_GATE_NOISE_K: '0', DISAGG_BRANCH: 'pr-9', DISAGG_BASELINE_BRANCH: 'release/1.0', DISAGG_HISTORY_LOCK_WAIT_SEC: '0' }).gate).toEqual({
      rule: 'upstream',
      alpha: 0.01,
      minRuns: 8,
      metrics: ['headline', 'SERVER_MEDIAN_TPOT', '-SERVER_MEDIAN_TTFT'],
      minDays: 1,
      noiseK: 0,
      branch: 'pr-9',
      baselineBranch: 'release/1.0',
      lockWaitSec: 0,
    });
    expect(read({ DISAGG_RUN_KIND: 'post-merge' }).runKind).toBe('post-merge');
  });

  it('DISAGG_HISTORY: off, a file, a postgres URL', () => {
    expect(read({ DISAGG_HISTORY: 'off' }).target).toEqual({ kind: 'off' });
    expect(read({ DISAGG_HISTORY: 'perf/h.duckdb' }).target).toEqual({ kind: 'duckdb', file: path.resolve('perf/h.duckdb') });
    expect(read({ DISAGG_HISTORY: 'postgresql://ci@db:5432/perf' }).target).toEqual({ kind: 'postgres', url: 'postgresql://ci@db:5432/perf' });
  });

  it('pre-merge fails on a regression unless DISAGG_REGRESSION says otherwise (upstream\'s automatic choice)', () => {
    expect(read({ DISAGG_RUN_KIND: 'pre-merge' }).regression).toBe('fail');
    expect(read({ DISAGG_RUN_KIND: 'pre-merge', DISAGG_REGRESSION: 'warn' }).regression).toBe('warn');
    expect(read({ DISAGG_REGRESSION: 'off', DISAGG_REGRESSION_THRESHOLD: '7.5%', DISAGG_RUN_LABEL: ' nightly ' })).toMatchObject({ regression: 'off', thresholdPercent: 7.5, runLabel: 'nightly' });
  });

  it('every wrong value is one line naming the variable, its value and what it takes', () => {
    let error: unknown;
    try {
      read({ DISAGG_HISTORY: 'mysql://db/x', DISAGG_RUN_KIND: 'nightly', DISAGG_REGRESSION: 'loud', DISAGG_REGRESSION_THRESHOLD: '-3', DISAGG_GATE_MIN_DAYS: '0', DISAGG_GATE_METRICS: 'a b', DISAGG_GATE_RULE: 'strict', DISAGG_GATE_ALPHA: '5%', DISAGG_GATE_MIN_RUNS: '2' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).problems).toEqual([
      'DISAGG_HISTORY="mysql://db/x": expected off, a postgres://user@host:port/database URL or a file path (DuckDB)',
      'DISAGG_RUN_KIND="nightly": expected post-merge or pre-merge or local (only post-merge runs feed later baselines)',
      'DISAGG_REGRESSION="loud": expected fail or warn or off (what a regression against the history does)',
      'DISAGG_REGRESSION_THRESHOLD="-3": expected a percentage > 0 (default 5 post-merge, 10 pre-merge)',
      'DISAGG_GATE_METRICS="a b": expected a comma-separated list of headline, all, metric names and -NAME (opted out)',
      'DISAGG_GATE_RULE="strict": expected robust or upstream (the regression gate\'s rule)',
      'DISAGG_GATE_ALPHA="5%": expected a share of runs between 0 and 0.5, e.g. 0.05 (default 0.05)',
      'DISAGG_GATE_MIN_RUNS="2": expected a whole number of runs >= 3 (default 5)',
      'DISAGG_GATE_MIN_DAYS="0": expected a whole number of days >= 1 (default 3)',
    ]);
  });
});
