import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Metric } from '../../framework/metrics/metric.ts';
import {
  appendPerfRows,
  CsvHeaderMismatchError,
  csvMetrics,
  PERF_CSV_COLUMNS,
  PERF_CSV_FILE,
  perfRowsFor,
} from '../../framework/results/csv.ts';
import { pythonFloatRepr } from '../../framework/results/python-float.ts';
import { servingCsvInfo } from '../../framework/types/serving/serving-type.ts';
import { disaggPerfMetrics, wideepPerfMetrics } from '../../framework/types/serving/metrics.ts';
import { baseConfig } from '../fixtures/serving/base-config.ts';

const timing = { start: new Date('2025-10-31T00:53:53Z'), end: new Date('2025-10-31T01:05:36.296Z'), durationSec: 703.2960254 };
const test = { name: 'disagg_perf_deepseek-r1-fp4_1k1k_ctx1_gen4_tep8_bs32_eplb0_mtp0_ccb-NIXL', model: 'deepseek-r1-fp4', precision: 'fp4' };
const ttft = (concurrency: number, value: number): Metric => ({ name: 'SERVER_MEDIAN_TTFT', value, unit: 'ms', higherIsBetter: false, labels: { concurrency } });
const header = PERF_CSV_COLUMNS.join(',');

let out: string;
beforeEach(async () => {
  out = await mkdtemp(path.join(tmpdir(), 'csv-'));
});
afterEach(() => rm(out, { recursive: true, force: true }));

describe('perfRowsFor', () => {
  it('builds one row per metric in the reference layout', () => {
    const rows = perfRowsFor(test, [ttft(8, 138.13)], timing, { smClk: 2062, memClk: 3996 });
    const name = `${test.name}_con:8`;
    expect(Object.keys(rows[0])).toEqual([...PERF_CSV_COLUMNS]);
    expect(rows[0]).toEqual({
      network_name: name,
      network_hash: name,
      sm_clk: 2062,
      mem_clk: 3996,
      gpu_idx: '',
      perf_case_name: name,
      test_name: name,
      original_test_name: name,
      perf_metric: 138.13,
      total_time__sec: 703.296025,
      start_timestamp: '2025-10-31 00:53:53',
      end_timestamp: '2025-10-31 01:05:36',
      state: 'valid',
      command: 'disagg_benchmark --model=deepseek-r1-fp4 --fp4 --concurrency=8',
      threshold: '',
      absolute_threshold: '',
      metric_type: 'SERVER_MEDIAN_TTFT',
    });
  });

  it('names non-serving rows by all their labels', () => {
    const [row] = perfRowsFor({ name: 'disagg_accuracy_x' }, [
      { name: 'ACCURACY', value: 0.9454, unit: 'fraction', labels: { dataset: 'gsm8k', filter: 'flexible-extract', run: 1 } },
    ], timing);
    expect(row.network_name).toBe('disagg_accuracy_x_dataset:gsm8k_filter:flexible-extract_run:1');
    expect(row.command).toBe('disagg_benchmark --dataset=gsm8k --filter=flexible-extract --run=1');
  });
});

describe('cells as upstream\'s result saver writes them (pandas to_csv)', () => {
  it('floats as Python\'s repr: .0 on whole numbers, exponent below 1e-4 and from 1e16', () => {
    const cases: Array<[number, string]> = [
      [100, '100.0'], [138.13, '138.13'], [0.1, '0.1'], [703.296025, '703.296025'], [1e-5, '1e-05'], [0.0001, '0.0001'],
      [1.5e-7, '1.5e-07'], [1e16, '1e+16'], [123456789012345.6, '123456789012345.6'], [1e15, '1000000000000000.0'],
      [-2.5, '-2.5'], [0, '0.0'], [-0, '-0.0'], [2 ** 53, '9007199254740992.0'], [1.2345e21, '1.2345e+21'], [NaN, 'nan'], [-Infinity, '-inf'],
    ];
    for (const [x, repr] of cases) expect(pythonFloatRepr(x), String(x)).toBe(repr);
  });

  it("json.dumps' spelling (the history's OpenSearch documents) differs only where the float is not finite", () => {
    // 2163847343988312.2: toFixed would round it to ...312.3; Python writes the shortest digits.
    const cases: Array<[number, string]> = [[NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity'], [5, '5.0'], [1e-5, '1e-05'], [2163847343988312.2, '2163847343988312.2']];
    for (const [x, repr] of cases) expect(pythonFloatRepr(x, 'json'), String(x)).toBe(repr);
  });

  it('perf_metric and total_time__sec are written as floats, the clocks as integers, a negative float unescaped', async () => {
    const rows = perfRowsFor(test, [ttft(8, 100), ttft(16, -1.5)], { ...timing, durationSec: 12 }, { smClk: 0, memClk: 0 });
    const lines = (await readFile(await appendPerfRows(out, rows), 'utf8')).split('\n');
    const cells = (line: string) => Object.fromEntries(line.split(',').map((c, i) => [PERF_CSV_COLUMNS[i], c]));
    expect(cells(lines[1])).toMatchObject({ sm_clk: '0', mem_clk: '0', gpu_idx: '', perf_metric: '100.0', total_time__sec: '12.0' });
    expect(cells(lines[2]).perf_metric).toBe('-1.5');
  });

  it('serving rows: test_benchmark[<id>] (test_stress[<id>] for stress), upstream\'s metrics only, none for accuracy', () => {
    const config = baseConfig();
    expect(servingCsvInfo(disaggPerfMetrics, config, 'perf', 'disagg_perf_x')).toEqual({
      model: 'deepseek-r1-fp4', precision: 'fp4', rowName: 'test_benchmark[disagg_perf_x]', metricNames: ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL'],
    });
    expect(servingCsvInfo(disaggPerfMetrics, config, 'stress', 'disagg_stress_x').rowName).toBe('test_stress[disagg_stress_x]');
    expect(servingCsvInfo(disaggPerfMetrics, config, 'accuracy', 'disagg_accuracy_x').metricNames).toEqual([]);
    const override = baseConfig({ benchmark: { metrics: { log_file: '6_bench.log', extractor_pattern: 'x(\\d+)', metric_names: ['MY_A', 'MY_B'] } } });
    expect(servingCsvInfo(disaggPerfMetrics, override, 'perf', 'disagg_perf_x').metricNames).toEqual(['MY_A', 'MY_B']);
    // Upstream's order of wideep's metric_names: per latency, mean, median, p99.
    expect(wideepPerfMetrics.slice(0, 4)).toEqual(['SERVER_MEAN_TTFT', 'SERVER_MEDIAN_TTFT', 'SERVER_P99_TTFT', 'SERVER_MEAN_TPOT']);
  });

  it('csvMetrics: the named metrics in their order per concurrency, the others only as extra rows', () => {
    const m = (name: string, concurrency: number): Metric => ({ name, value: 1, unit: 'ms', labels: { concurrency } });
    const metrics = [m('SERVER_SUCCESSFUL_REQUESTS', 8), m('SERVER_MEDIAN_E2EL', 8), m('SERVER_MEDIAN_TTFT', 8), m('SERVER_MEDIAN_E2EL', 16), m('SERVER_MEDIAN_TTFT', 16), m('SERVER_MEDIAN_TTFT', 8), m('SERVER_MEDIAN_E2EL', 8)];
    const names = (list: Metric[]) => list.map((x) => `${x.name}@${x.labels.concurrency}`);
    expect(names(csvMetrics(metrics, disaggPerfMetrics))).toEqual([
      'SERVER_MEDIAN_TTFT@8', 'SERVER_MEDIAN_E2EL@8', 'SERVER_MEDIAN_TTFT@16', 'SERVER_MEDIAN_E2EL@16', 'SERVER_MEDIAN_TTFT@8', 'SERVER_MEDIAN_E2EL@8',
    ]);
    expect(names(csvMetrics(metrics, disaggPerfMetrics, true)).slice(6)).toEqual(['SERVER_SUCCESSFUL_REQUESTS@8']);
    expect(csvMetrics(metrics, [])).toEqual([]);
    expect(csvMetrics(metrics, undefined)).toBe(metrics);
  });
});

describe('appendPerfRows', () => {
  it('writes the header once; a replay appends the same rows again and the file stays well-formed', async () => {
    const rows = perfRowsFor(test, [ttft(8, 138.13), ttft(16, 144.3)], timing, { smClk: 2062, memClk: 3996 });
    const file = await appendPerfRows(out, rows);
    expect(file).toBe(path.join(out, PERF_CSV_FILE));
    await appendPerfRows(out, rows);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines[0]).toBe(header);
    expect(lines.filter((l) => l === header)).toHaveLength(1);
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -1)).toHaveLength(4);
    expect(lines[1]).toBe(
      `${Array(2).fill(`${test.name}_con:8`).join(',')},2062,3996,,${Array(3).fill(`${test.name}_con:8`).join(',')},138.13,703.296025,` +
        '2025-10-31 00:53:53,2025-10-31 01:05:36,valid,disagg_benchmark --model=deepseek-r1-fp4 --fp4 --concurrency=8,,,SERVER_MEDIAN_TTFT',
    );
    expect(lines[3]).toBe(lines[1]);
  });

  it('escapes formula-like text but leaves negative numbers alone', async () => {
    const rows = perfRowsFor({ name: '=HYPERLINK("x")' }, [{ name: '+SUM', value: -1.5, unit: '', labels: {} }], timing);
    const text = await readFile(await appendPerfRows(out, rows), 'utf8');
    const line = text.split('\n')[1];
    expect(line.startsWith(`"'=HYPERLINK(""x"")"`)).toBe(true);
    expect(line).toContain(',-1.5,');
    expect(line.endsWith(",'+SUM")).toBe(true);
  });

  it('refuses to append under a different header and leaves the file untouched', async () => {
    const file = path.join(out, PERF_CSV_FILE);
    const old = 'network_name,perf_metric,metric_type\nx,1,Y\n';
    await writeFile(file, old);
    const error = await appendPerfRows(out, perfRowsFor(test, [ttft(8, 1)], timing)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CsvHeaderMismatchError);
    expect((error as Error).message).toMatch(/refusing to append to .*perf_script_test_results\.csv/);
    expect((error as Error).message).toContain('found:    network_name,perf_metric,metric_type');
    expect(await readFile(file, 'utf8')).toBe(old);
  });

  it('starts on a fresh line after a partial last row', async () => {
    const file = path.join(out, PERF_CSV_FILE);
    await writeFile(file, `${header}\nhalf,a,row`);
    await appendPerfRows(out, perfRowsFor(test, [ttft(8, 1)], timing));
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines[1]).toBe('half,a,row');
    expect(lines[2].startsWith(`${test.name}_con:8,`)).toBe(true);
  });

  it('never interleaves rows or repeats the header when many writers in two processes and this one append at once', async () => {
    const worker = fileURLToPath(new URL('../fixtures/results/append-worker.ts', import.meta.url));
    const count = 20;
    const startAt = Date.now() + 2000; // every writer starts at the same millisecond (late children still start together)
    const children = ['p1', 'p2'].map((name) =>
      execa(process.execPath, ['--import', 'tsx', worker, out, name, String(count), String(startAt)], { cwd: path.dirname(worker) }),
    );
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
    await Promise.all([
      ...children,
      ...Array.from({ length: count }, (_, i) =>
        appendPerfRows(out, perfRowsFor({ name: `main_${i}` }, [ttft(i, i + 0.5)], timing)),
      ),
    ]);
    const lines = (await readFile(path.join(out, PERF_CSV_FILE), 'utf8')).split('\n');
    expect(lines[0]).toBe(header);
    expect(lines.pop()).toBe('');
    const rows = lines.slice(1);
    expect(rows).toHaveLength(3 * count);
    const names = rows.map((row) => {
      const cells = row.split(',');
      expect(cells).toHaveLength(PERF_CSV_COLUMNS.length);
      expect(cells[0]).toMatch(/^(main|p1|p2)_\d+_con:\d+$/);
      expect(cells[16]).toBe('SERVER_MEDIAN_TTFT');
      return cells[0];
    });
    const expected = ['main', 'p1', 'p2'].flatMap((w) => Array.from({ length: count }, (_, i) => `${w}_${i}_con:${i}`));
    expect(names.sort()).toEqual(expected.sort());
  });
});
