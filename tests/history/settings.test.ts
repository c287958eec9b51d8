// The history's variables, read with the run's other settings: defaults, each form of
// DISAGG_HISTORY, and one line per wrong value (the run stops before submitting anything).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSettings, SettingsError } from '../../framework/settings.ts';

const read = (env: Record<string, string>) => readSettings({ OUTPUT_PATH: '/tmp/out', ...env }).history;

describe('history settings', () => {
  it('defaults: a DuckDB file in OUTPUT_PATH, post-merge, warn', () => {
    expect(read({})).toEqual({ target: { kind: 'duckdb', file: '/tmp/out/history.duckdb' }, runKind: 'post-merge', regression: 'warn', thresholdPercent: undefined, runLabel: undefined });
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
      read({ DISAGG_HISTORY: 'mysql://db/x', DISAGG_RUN_KIND: 'nightly', DISAGG_REGRESSION: 'loud', DISAGG_REGRESSION_THRESHOLD: '-3' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).problems).toEqual([
      'DISAGG_HISTORY="mysql://db/x": expected off, a postgres://user@host:port/database URL or a file path (DuckDB)',
      'DISAGG_RUN_KIND="nightly": expected post-merge or pre-merge (post-merge runs feed later baselines, pre-merge runs do not)',
      'DISAGG_REGRESSION="loud": expected fail or warn or off (what a regression against the history does)',
      'DISAGG_REGRESSION_THRESHOLD="-3": expected a percentage > 0 (default 5 post-merge, 10 pre-merge)',
    ]);
  });
});
