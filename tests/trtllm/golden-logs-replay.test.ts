// The golden-log suite, the TensorRT-LLM side: for each client whose output is parsed
// (benchmark_serving in every layout it has printed, the SA client, aiperf), a log in upstream's
// exact format, warm-ups included (our own fixtures of the same shape:
// tests/fixtures/logs/serving/golden/, tests/fixtures/logs/aiperf/), goes through the whole
// framework (`vitest run` with DEBUG_MODE=1 replays) and upstream's values come out by name: in
// results.json, and in the CSV as upstream's result saver writes it (rows
// `test_benchmark[<id>]_con:<N>` / `test_stress[...]`, upstream's metric names in its order, its
// cells: GB200's locked clocks, floats as pandas writes them). Expected values come from each
// log's <name>.expected.json (read from the measured blocks) or aiperf's own JSON; no warm-up value
// (8000 ms and up in these logs) reaches either file. No CSV row for an accuracy test, as upstream.
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseConfig, type Json } from '../fixtures/serving/base-config.ts';
import { readCsv } from '../fixtures/reliability/csv-read.ts';
import { recordOf, removeWorkDirs, runSuite, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';
import { PERF_CSV_FILE } from '../../framework/results/csv.ts';
import { pythonFloatRepr } from '../../framework/results/python-float.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { disaggPerfMetrics, wideepPerfMetrics } from '../../framework/types/serving/metrics.ts';

afterAll(removeWorkDirs);

const fixtures = path.resolve(import.meta.dirname, '../fixtures/logs');
const golden = path.join(fixtures, 'serving/golden');
type Expected = Record<string, Record<string, number>>;
const expectedOf = (name: string): Expected => JSON.parse(readFileSync(path.join(golden, `${name}.expected.json`), 'utf8'));

interface Case {
  /** Key for writeWorkDir: `type/category/name`. */
  key: string;
  log: string;
  config: Json;
}

const serving = (log: string, category = 'perf', type = 'disagg', benchmark: Json = {}): Case => {
  const concurrencies = Object.keys(expectedOf(log)).map(Number).sort((a, b) => a - b);
  return {
    key: `${type}/${category}/${log.replace(/-/g, '_')}`,
    log,
    config: baseConfig({ benchmark: { concurrency_list: concurrencies.join(' '), failed_requests_tolerance: 5, ...benchmark } }),
  };
};

const disaggCases: Case[] = [
  serving('v1-successful-only'),
  serving('v2-user-throughput-failed-banner'),
  serving('v3-total-and-failed-lines', 'stress'),
  serving('v5-goodput-energy'),
  serving('total-and-successful-only'),
  serving('exact-warmup', 'perf', 'disagg', { exact_warmup_rounds: 1 }),
  serving('sa-bench-serving', 'perf', 'disagg', { use_nv_sa_benchmark: true, benchmark_ratio: 0.8 }),
];

function placeLogs(outputPath: string, cases: Case[]) {
  cases.forEach((c, i) => {
    const [type, category, name] = c.key.split('/');
    const dir = path.join(outputPath, 'slurm_logs', testIdOf(name, type, category));
    mkdirSync(dir, { recursive: true });
    copyFileSync(path.join(golden, `${c.log}.log`), path.join(dir, '6_bench.log'));
    writeFileSync(path.join(dir, `slurm-${9300 + i}.out`), '');
  });
}

type Row = Record<string, string>;
const csvOf = (outputPath: string): Row[] => readCsv(readFileSync(path.join(outputPath, PERF_CSV_FILE), 'utf8'));

/** Upstream's rows for one test: per concurrency, each metric name in order, its value as pandas writes it. */
function expectUpstreamRows(rows: Row[], rowName: string, expected: Expected, names: string[]) {
  const mine = rows.filter((r) => r.perf_case_name.startsWith(`${rowName}_con:`));
  const concurrencies = Object.keys(expected).map(Number).sort((a, b) => a - b);
  expect(mine.map((r) => [r.perf_case_name, r.metric_type, r.perf_metric])).toEqual(
    concurrencies.flatMap((c) => names.map((name) => [`${rowName}_con:${c}`, name, pythonFloatRepr(expected[c][name])])),
  );
  for (const r of mine) {
    const c = r.perf_case_name.split('_con:')[1];
    expect(r).toMatchObject({
      network_name: r.perf_case_name, network_hash: r.perf_case_name, test_name: r.perf_case_name, original_test_name: r.perf_case_name,
      sm_clk: '2062', mem_clk: '3996', gpu_idx: '', state: 'valid', threshold: '', absolute_threshold: '',
      command: `disagg_benchmark --model=deepseek-r1-fp4 --fp4 --concurrency=${c}`,
    });
  }
}

/** results.json: the measured blocks' values of the type's metrics, by name. */
function expectJsonValues(metrics: TestRecord['metrics'], expected: Expected, names: string[], what: string) {
  for (const [concurrency, values] of Object.entries(expected)) {
    for (const name of names) {
      expect(metrics.find((m) => m.name === name && m.labels.concurrency === Number(concurrency))?.value, `${what} ${name}@${concurrency}`).toBe(values[name]);
    }
  }
}

describe('golden logs through the framework (DEBUG_MODE replays)', () => {
  it('benchmark_serving of every layout, the SA client, aiperf: upstream\'s values by name in results.json and the CSV; none of the warm-ups\'; no row for accuracy', async () => {
    const accuracy: Json = baseConfig({
      metadata: { accuracy: { datasets: [{ dataset_name: 'gsm8k', expected_value: 0.9, threshold_type: 'hypothesis_test', filter_type: 'flexible-extract' }] } },
      accuracy: { enable_accuracy_test: true, tasks: { gsm8k: { model: 'local-completions', model_args_extra: 'num_concurrent=512' } } },
    });
    const aiperf: Json = baseConfig({ commands: { client: 'aiperf' }, benchmark: { concurrency_list: '8 16', dataset_file: '/data/trace.jsonl', failed_requests_tolerance: 5 } });
    const configs = Object.fromEntries(disaggCases.map((c) => [c.key, c.config]));
    const { workDir, outputPath } = writeWorkDir({ ...configs, 'disagg/accuracy/gsm8k': accuracy, 'disagg/perf/aiperf_trace': aiperf }, 'golden-');
    placeLogs(outputPath, disaggCases);
    const accDir = path.join(outputPath, 'slurm_logs', testIdOf('gsm8k', 'disagg', 'accuracy'));
    mkdirSync(accDir, { recursive: true });
    copyFileSync(path.join(fixtures, 'lm-eval/7_accuracy_eval_gsm8k.log'), path.join(accDir, '7_accuracy_eval_gsm8k.log'));
    writeFileSync(path.join(accDir, 'slurm-9400.out'), '');
    const aiperfDir = path.join(outputPath, 'slurm_logs', testIdOf('aiperf_trace'));
    cpSync(path.join(fixtures, 'aiperf'), aiperfDir, { recursive: true });
    writeFileSync(path.join(aiperfDir, 'slurm-9401.out'), '');

    const run = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DEBUG_MODE: '1' } });
    expect(run.exitCode, run.output).toBe(0);
    const rows = csvOf(outputPath);

    for (const c of disaggCases) {
      const [type, category, name] = c.key.split('/');
      const id = testIdOf(name, type, category);
      const expected = expectedOf(c.log);
      const record = recordOf(run.records, id)!;
      expect(record?.verdict, `${c.log}: ${JSON.stringify(record?.failures)}`).toBe('passed');
      expectJsonValues(record.metrics, expected, disaggPerfMetrics, c.log);
      expect(record.metrics.filter((m) => m.unit === 'ms' && m.value >= 8000)).toEqual([]);
      expectUpstreamRows(rows, `${category === 'stress' ? 'test_stress' : 'test_benchmark'}[${id}]`, expected, disaggPerfMetrics);
    }

    // aiperf: its JSON's p50s are the medians (time_to_first_token -> TTFT, request_latency -> E2EL).
    const aiperfExpected: Expected = {};
    for (const c of [8, 16]) {
      const json = JSON.parse(readFileSync(path.join(fixtures, `aiperf/concurrency_${c}/profile_export_aiperf.json`), 'utf8'));
      aiperfExpected[c] = { SERVER_MEDIAN_TTFT: json.time_to_first_token.p50, SERVER_MEDIAN_E2EL: json.request_latency.p50 };
    }
    const aiperfRecord = recordOf(run.records, testIdOf('aiperf_trace'))!;
    expect(aiperfRecord.verdict, JSON.stringify(aiperfRecord.failures)).toBe('passed');
    for (const c of [8, 16]) {
      for (const [metric, value] of Object.entries(aiperfExpected[c])) {
        expect(aiperfRecord.metrics.find((m) => m.name === metric && m.labels.concurrency === c)?.value).toBe(value);
      }
    }
    expectUpstreamRows(rows, `test_benchmark[${testIdOf('aiperf_trace')}]`, aiperfExpected, disaggPerfMetrics);

    // Accuracy: judged and recorded in results.json, no CSV row (upstream's test_accuracy writes none).
    const acc = recordOf(run.records, testIdOf('gsm8k', 'disagg', 'accuracy'))!;
    expect(acc.verdict, JSON.stringify(acc.failures)).toBe('passed');
    expect(acc.metrics.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.perf_case_name.includes('gsm8k'))).toEqual([]);
    // Only upstream's names: no request counts, no other block line.
    expect(new Set(rows.map((r) => r.metric_type))).toEqual(new Set(disaggPerfMetrics));
    expect(rows).toHaveLength((disaggCases.reduce((n, c) => n + Object.keys(expectedOf(c.log)).length, 0) + 2) * 2);
  }, 300_000);

  it('wideep: the 12 latency statistics in upstream\'s order; DISAGG_CSV_EXTRA_ROWS=1 adds the other metrics after them', async () => {
    const c = serving('v4-std-min-max-decoded-tokens', 'perf', 'wideep');
    const { workDir, outputPath } = writeWorkDir({ [c.key]: c.config }, 'golden-wideep-');
    placeLogs(outputPath, [c]);
    const run = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'wideep', env: { DEBUG_MODE: '1', DISAGG_CSV_EXTRA_ROWS: '1' } });
    expect(run.exitCode, run.output).toBe(0);
    const id = testIdOf('v4_std_min_max_decoded_tokens', 'wideep', 'perf');
    const record = recordOf(run.records, id)!;
    expect(record.verdict, JSON.stringify(record.failures)).toBe('passed');
    expectJsonValues(record.metrics, expectedOf(c.log), wideepPerfMetrics, c.log);
    const rows = csvOf(outputPath);
    const upstream = rows.filter((r) => wideepPerfMetrics.includes(r.metric_type));
    expectUpstreamRows(upstream, `test_benchmark[${id}]`, expectedOf(c.log), wideepPerfMetrics);
    // The extra rows (the request counts the verdict reads, and the headline throughputs and decoded
    // tokens per iteration the client printed) come after upstream's, named the same way.
    expect(rows.slice(0, upstream.length)).toEqual(upstream);
    const extra = (c: number, succeeded: string, failed: string, output: string, total: string) => [
      [`test_benchmark[${id}]_con:${c}`, 'SERVER_SUCCESSFUL_REQUESTS', succeeded], [`test_benchmark[${id}]_con:${c}`, 'SERVER_FAILED_REQUESTS', failed],
      [`test_benchmark[${id}]_con:${c}`, 'SERVER_OUTPUT_TOKEN_THROUGHPUT', output], [`test_benchmark[${id}]_con:${c}`, 'SERVER_TOTAL_TOKEN_THROUGHPUT', total],
      [`test_benchmark[${id}]_con:${c}`, 'SERVER_MEAN_AVG_DECODED_TOKENS_PER_ITER', '2.41'],
    ];
    expect(rows.slice(upstream.length).map((r) => [r.perf_case_name, r.metric_type, r.perf_metric])).toEqual([
      ...extra(8, '62.0', '2.0', '5771.64', '11543.27'),
      ...extra(16, '128.0', '0.0', '10922.67', '21845.33'),
    ]);
  }, 300_000);
});
