// `history regressions` and `history import` on results.json files of every shape this project has
// written (the real bin, real DuckDB files): records without a run block (every file before that
// block existed), with a run but no gate list, with a gate but no headline, and today's. Each is
// judged, never a crash read as a verdict: exit 1 only with a regression listed, a command that
// could not do its work exits 3 in one line. An import keeps one run per run: a run folder's id,
// else one id for the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestRecord } from '../../framework/results/json.ts';
import { DAY0, DAY_MS, record as servingRecord } from '../fixtures/history/records.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'history-older-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// What is asked here is that every shape is read and judged, not how the gate judges (its own
// tests): upstream's rule, whose verdict five days of history settle.
function cli(args: string[], env: Record<string, string>) {
  return execa('node', [path.join(root, 'bin/disagg-bench.js'), 'history', ...args], { cwd: scratch, env: { OUTPUT_PATH: path.join(scratch, 'out'), WORK_DIR: root, DISAGG_GATE_RULE: 'upstream', ...env }, reject: false, all: true });
}

const resultsFile = (name: string, records: unknown[], version: unknown = 1) => {
  const file = path.join(scratch, name);
  writeFileSync(file, JSON.stringify({ version, updated: new Date(DAY0).toISOString(), records }, null, 2));
  return file;
};

/** A test id with a config under WORK_DIR (this repository), and one without. */
const WITH_CONFIG = 'nixl_perf_sweep_shm_read_write';
const WITHOUT_CONFIG = 'nixl_perf_sweep_gone';
const TESTS = [WITH_CONFIG, WITHOUT_CONFIG, ...Array.from({ length: 11 }, (_, k) => `nixl_perf_sweep_gone_${k}`)];

type Shape = 'no run block' | 'run without gate' | 'gate without headline' | 'today';

/** A nixl sweep's record (bandwidth per block size) on `day`, as a version of `shape` wrote it. */
function nixlRecord(testId: string, day: number, gbps: number, shape: Shape, runId = `run-day${day}`): Record<string, unknown> {
  const start = DAY0 + day * DAY_MS + 10 * 3_600_000;
  const metrics = [4096, 65536, 1048576].map((block, k) => ({ name: 'BW_GBPS', value: gbps * (k + 1), unit: 'GB/s', higherIsBetter: true, labels: { op: 'WRITE', batch_size: 1, block_size: block } }));
  const base: Record<string, unknown> = {
    testId, type: 'nixl', category: 'perf', configPath: `test_configs/nixl/perf/${testId.slice('nixl_perf_'.length)}.yaml`,
    jobId: `${runId}-${testId}`, schedulerState: 'COMPLETED', verdict: 'passed', failures: [], metrics,
    timing: { start: new Date(start).toISOString(), end: new Date(start + 60_000).toISOString(), durationSec: 60 },
    host: 'node-a', gpuType: 'H100', logDir: `/results/slurm_logs/${testId}`,
  };
  // A run block says the identity of its config; a test whose config is gone had none to say.
  const run = { id: runId, kind: 'post-merge', ...(testId === WITH_CONFIG ? { identity: { benchmark_kind: 'sweep', transfer_backend: 'shm' } } : {}) };
  switch (shape) {
    case 'no run block':
      return { ...base, problems: [] }; // the first versions' field, since gone
    case 'run without gate':
      return { ...base, run };
    case 'gate without headline':
      return { ...base, csvRows: { count: 3 }, run: { ...run, gate: ['BW_GBPS'] } };
    case 'today':
      return { ...base, csvRows: { count: 3 }, run: { ...run, gate: ['BW_GBPS'] }, headline: [{ name: 'BW_GBPS', labels: metrics[2].labels }], job: { queueSec: 1, runSec: 59 } };
  }
}

const SHAPES: Shape[] = ['no run block', 'run without gate', 'gate without headline', 'today'];

describe('results.json of every version this project wrote', () => {
  it('imports a run of 13 tests without run blocks as one run a day, and judges every shape without a crash', { timeout: 300_000 }, async () => {
    const env = { DISAGG_HISTORY: path.join(scratch, 'h1.duckdb') };
    // Five post-merge days, as the oldest version wrote them: no run block at all.
    for (let day = 0; day < 5; day++) {
      const imported = await cli(['import', resultsFile(`day${day}.json`, TESTS.map((t) => nixlRecord(t, day, 10, 'no run block'))), '--kind', 'post-merge'], env);
      expect(imported.exitCode, imported.all).toBe(0);
      expect(imported.stdout).toMatch(/13 record\(s\) and 39 metric value\(s\) appended/);
    }
    const runs = await cli(['runs'], env);
    expect(runs.stdout.trim().split('\n').filter((l) => /test\(s\)/.test(l)).map((l) => l.match(/(\d+) test\(s\)/)![1])).toEqual(['13', '13', '13', '13', '13']);
    expect(runs.stdout).toMatch(/^5 run\(s\)$/m);
    // Importing a file again adds nothing: its id is stable.
    expect((await cli(['import', path.join(scratch, 'day0.json'), '--kind', 'post-merge'], env)).stdout).toMatch(/0 record\(s\) and 0 metric value\(s\) appended, 13 already there/);

    for (const shape of SHAPES) {
      // Halved bandwidth on day 6: every shape is judged, each regression listed, exit 1.
      const slower = await cli(['regressions', resultsFile(`slower-${shape}.json`, TESTS.map((t) => nixlRecord(t, 6, 5, shape)))], env);
      expect(slower.stderr, `${shape}: ${slower.all}`).toBe('');
      expect(slower.exitCode, `${shape}: ${slower.all}`).toBe(1);
      expect(slower.stdout).toMatch(new RegExp(`^REGRESSION {2}${WITH_CONFIG} BW_GBPS\\[`, 'm'));
      expect(slower.stdout).toMatch(new RegExp(`^REGRESSION {2}${WITHOUT_CONFIG} BW_GBPS\\[`, 'm'));
      expect(slower.stdout).toMatch(/13 test\(s\), 39 metric\(s\) compared .*\((\d+) gating\), [1-9]\d* regression\(s\)/);
    }
    // The same bandwidth: judged, nothing listed, exit 0.
    const same = await cli(['regressions', resultsFile('same.json', TESTS.map((t) => nixlRecord(t, 6, 10, 'no run block')))], env);
    expect(same.exitCode, same.all).toBe(0);
    expect(same.stdout).toMatch(/13 test\(s\), 39 metric\(s\) compared .*, 0 regression\(s\)/);

    // Imported, the oldest shape's slower run is the latest in the store: judged from there too.
    expect((await cli(['import', path.join(scratch, 'slower-no run block.json'), '--kind', 'post-merge'], env)).exitCode).toBe(0);
    const latest = await cli(['regressions'], env);
    expect(latest.exitCode, latest.all).toBe(1);
    expect(latest.stdout).toMatch(/: 13 test\(s\), 39 metric\(s\) compared .*, [1-9]\d* regression\(s\)/);
    expect(latest.stdout).toMatch(new RegExp(`^REGRESSION {2}${WITHOUT_CONFIG} BW_GBPS\\[`, 'm'));
  });

  it('judges a serving record without its run block or config by its type\'s headline', { timeout: 120_000 }, async () => {
    const env = { DISAGG_HISTORY: path.join(scratch, 'h2.duckdb') };
    const older = (spec: Parameters<typeof servingRecord>[0]): TestRecord => {
      const { run: _, ...rest } = servingRecord(spec);
      return rest;
    };
    const tpot = (ms: number) => ({ name: 'SERVER_MEAN_TPOT', value: ms, unit: 'ms', higherIsBetter: false, labels: { concurrency: 8 } });
    // Five days in one file (an OUTPUT_PATH that runs wrote into one after another): five runs.
    const imported = await cli(['import', resultsFile('serving-days.json', [0, 1, 2, 3, 4].map((day) => older({ runId: `d${day}`, day, testId: 'disagg_perf_gone', extra: [tpot(10)] }))), '--kind', 'post-merge'], env);
    expect(imported.stdout, imported.all).toMatch(/5 record\(s\) and 20 metric value\(s\) appended, 0 already there/);
    expect((await cli(['runs'], env)).stdout).toMatch(/^5 run\(s\)$/m);
    // Throughput (a headline figure of the serving type) down 40 %, mean TPOT (not one) up 4x.
    const judged = await cli(['regressions', resultsFile('serving.json', [older({ runId: 'y', day: 6, throughput: 600, testId: 'disagg_perf_gone', extra: [tpot(40)] })])], env);
    expect(judged.exitCode, judged.all).toBe(1);
    expect(judged.stdout).toMatch(/^REGRESSION {2}disagg_perf_gone SERVER_OUTPUT_TOKEN_THROUGHPUT\[concurrency=8\]/m);
    expect(judged.stdout).not.toMatch(/REGRESSION .*SERVER_MEAN_TPOT/);
    expect(judged.stdout).toMatch(/1 test\(s\), 3 metric\(s\) compared .*, 1 regression\(s\)/);
  });

  it('gives records without a run block the id of the run folder their logs are in', { timeout: 120_000 }, async () => {
    const env = { DISAGG_HISTORY: path.join(scratch, 'h3.duckdb') };
    const inFolder = (testId: string, runId: string) => ({ ...nixlRecord(testId, 1, 10, 'no run block'), logDir: `/results/runs/${runId}/slurm_logs/${testId}` });
    const file = resultsFile('two-runs.json', [inFolder('nixl_perf_a', 'run-2026-11-02T10-00-00-000Z-7'), inFolder('nixl_perf_b', 'run-2026-11-02T10-00-00-000Z-7'), inFolder('nixl_perf_a', 'run-2026-11-02T11-00-00-000Z-8')]);
    expect((await cli(['import', file], env)).exitCode).toBe(0);
    const runs = await cli(['runs'], env);
    expect(runs.stdout).toMatch(/2 test\(s\) .* run-2026-11-02T10-00-00-000Z-7 /);
    expect(runs.stdout).toMatch(/1 test\(s\) .* run-2026-11-02T11-00-00-000Z-8 /);
    expect(runs.stdout).toMatch(/^2 run\(s\)$/m);
  });

  it('a command that cannot do its work: one line, exit 3 (2 for a usage error), never 1', { timeout: 300_000 }, async () => {
    const env = { DISAGG_HISTORY: path.join(scratch, 'h4.duckdb') };
    const missingStore = await cli(['regressions'], env);
    expect([missingStore.exitCode, missingStore.stdout]).toEqual([3, '']);
    expect(missingStore.stderr).toMatch(/^disagg-bench history regressions: the DuckDB history .*h4\.duckdb: the file does not exist; [^\n]*$/);
    expect((await cli(['import', resultsFile('seed.json', [nixlRecord('nixl_perf_a', 0, 10, 'today')])], env)).exitCode).toBe(0);
    const cases: [string[], RegExp][] = [
      [['regressions', path.join(scratch, 'nothing-here.json')], /nothing-here\.json: no such file or folder$/],
      [['regressions', resultsFile('v2.json', [nixlRecord('nixl_perf_a', 1, 10, 'today')], 2)], /v2\.json: version 2 is not the supported version 1$/],
      [['regressions', resultsFile('bad-metrics.json', [{ ...nixlRecord('nixl_perf_a', 1, 10, 'today'), metrics: 7 }])], /bad-metrics\.json: records\[0\] metrics is 7, expected a list of metrics$/],
      [['import', resultsFile('bad-run.json', [{ ...nixlRecord('nixl_perf_a', 1, 10, 'today'), run: { id: 4 } }])], /bad-run\.json: records\[0\] run\.id is 4, expected a string$/],
      [['show', 'nixl_perf_none'], /no values of nixl_perf_none in the DuckDB history .*; `disagg-bench history runs` lists what it holds$/],
      [['compare', 'no-such-run', 'latest'], /no run with the id or label 'no-such-run'/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args, env);
      expect(r.exitCode, `${args.join(' ')}: ${r.all}`).toBe(3);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(new RegExp(`^disagg-bench history ${args[0]}: `));
      expect(r.stderr.trim()).toMatch(message);
    }
    const usage = await cli(['regressions', '--kind', 'nightly'], env);
    expect(usage.exitCode).toBe(2);
  });
});
