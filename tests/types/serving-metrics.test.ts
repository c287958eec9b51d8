// Default metrics of disagg/wideep, the config's override, and the verdict: every concurrency has
// a result, failed requests within tolerance, every default metric present, accuracy runs pass.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { Metric } from '../../framework/metrics/metric.ts';
import { extractMetrics } from '../../framework/metrics/log-parser.ts';
import { disaggType } from '../../framework/types/disagg.ts';
import { wideepType } from '../../framework/types/wideep.ts';
import { baseConfig, type Json } from '../fixtures/serving/base-config.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'serving-metrics-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const metric = (name: string, concurrency: number, value = 1): Metric => ({ name, value, unit: 'ms', labels: { concurrency } });
/** What the serving extractor yields for one clean concurrency. */
const clean = (c: number) => [
  metric('SERVER_MEDIAN_TTFT', c, 120), metric('SERVER_MEDIAN_E2EL', c, 900),
  metric('SERVER_FAILED_REQUESTS', c, 0), metric('SERVER_SUCCESSFUL_REQUESTS', c, 8),
];

function verdict(config: Json, metrics: Metric[], category = 'perf') {
  return disaggType.verdict({ testId: 't', category, config, logDir: scratch, metrics, problems: [] });
}

describe('metric specs', () => {
  test('disagg perf/stress: median TTFT and E2EL from 6_bench.log, plus the request counts the verdict needs and the gated throughputs where printed', () => {
    for (const category of ['perf', 'stress']) {
      expect(disaggType.metrics(baseConfig(), category)).toEqual([
        { logFile: '6_bench.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL', 'SERVER_FAILED_REQUESTS', 'SERVER_SUCCESSFUL_REQUESTS'],
        optionalNames: ['SERVER_OUTPUT_TOKEN_THROUGHPUT', 'SERVER_TOTAL_TOKEN_THROUGHPUT', 'SERVER_MEAN_AVG_DECODED_TOKENS_PER_ITER'] },
      ]);
    }
  });

  test('wideep perf: mean, median and p99 of TTFT, TPOT, ITL and E2EL, in upstream\'s metric_names order', () => {
    const [spec] = wideepType.metrics(baseConfig(), 'perf');
    expect(spec.names!.slice(0, 12)).toEqual([
      'SERVER_MEAN_TTFT', 'SERVER_MEDIAN_TTFT', 'SERVER_P99_TTFT',
      'SERVER_MEAN_TPOT', 'SERVER_MEDIAN_TPOT', 'SERVER_P99_TPOT',
      'SERVER_MEAN_ITL', 'SERVER_MEDIAN_ITL', 'SERVER_P99_ITL',
      'SERVER_MEAN_E2EL', 'SERVER_MEDIAN_E2EL', 'SERVER_P99_E2EL',
    ]);
  });

  test('accuracy: every 7_accuracy_eval_*.log through lm-eval', () => {
    expect(disaggType.metrics(baseConfig(), 'accuracy')).toEqual([{ logFile: '7_accuracy_eval_*.log', extractor: 'lm-eval' }]);
  });

  test('benchmark.metrics (or metadata.metrics) replaces the defaults with the regex extractor', () => {
    const override = { log_file: 'custom.log', extractor_pattern: 'Custom:\\s+([0-9.]+)', metric_names: ['CUSTOM'], unit: 'ms' };
    const expected = [{ logFile: 'custom.log', extractor: 'regex', pattern: 'Custom:\\s+([0-9.]+)', names: ['CUSTOM'], unit: 'ms', higherIsBetter: undefined }];
    expect(disaggType.metrics(baseConfig({ benchmark: { metrics: override } }), 'perf')).toEqual(expected);
    expect(wideepType.metrics(baseConfig({ metadata: { metrics: override } }), 'perf')).toEqual(expected);
  });
});

describe('perf verdict', () => {
  // concurrency_list "1 2 4 8" with 2 generation servers: the job ran (and labelled) 2, 4, 8, 16.
  const config = baseConfig({ hardware: { num_gen_servers: 2 } });

  test('every concurrency clean: pass', () => {
    expect(verdict(config, [2, 4, 8, 16].flatMap(clean))).toEqual({ passed: true, failures: [] });
  });

  test('missing concurrencies, failed requests and missing metrics are all reported at once', () => {
    const metrics = [
      ...clean(2),
      ...clean(4).map((m) => (m.name === 'SERVER_FAILED_REQUESTS' ? { ...m, value: 3 } : m)),
      ...clean(8).filter((m) => m.name !== 'SERVER_MEDIAN_E2EL'),
    ];
    expect(verdict(config, metrics)).toEqual({
      passed: false,
      failures: [
        'concurrency 4: 3 failed requests (tolerated: 0)',
        'concurrency 16: no result in the benchmark log',
        'concurrency 8: no SERVER_MEDIAN_E2EL in the benchmark log',
      ],
    });
  });

  test('benchmark.failed_requests_tolerance raises the bar', () => {
    const metrics = [2, 4, 8, 16].flatMap(clean).map((m) => (m.name === 'SERVER_FAILED_REQUESTS' ? { ...m, value: 2 } : m));
    const tolerant = baseConfig({ hardware: { num_gen_servers: 2 }, benchmark: { failed_requests_tolerance: 2 } });
    expect(verdict(tolerant, metrics).passed).toBe(true);
    expect(verdict(config, metrics).failures).toHaveLength(4);
  });

  test('with the benchmark disabled nothing is asked of it', () => {
    expect(verdict(baseConfig({ benchmark: { enable_benchmark: false } }), [])).toEqual({ passed: true, failures: [] });
  });
});

describe('accuracy verdict', () => {
  const table = (value: number) => [
    '|Tasks|Version|     Filter     |n-shot|   Metric  |   |Value |   |Stderr|',
    '|-----|------:|----------------|-----:|-----------|---|-----:|---|-----:|',
    `|gsm8k|      3|flexible-extract|     5|exact_match|↑  |${value}|±  |0.0063|`,
    '|     |       |strict-match    |     5|exact_match|↑  |0.9447|±  |0.0063|',
    '',
  ].join('\n');
  const config = baseConfig({
    metadata: { accuracy: { datasets: [{ dataset_name: 'gsm8k', expected_value: 0.9454, filter_type: 'flexible-extract' }] } },
    accuracy: { enable_accuracy_test: true, tasks: { gsm8k: {} } },
  });

  async function judge(text: string, cfg: Json = config) {
    const dir = mkdtempSync(path.join(scratch, 'acc-'));
    writeFileSync(path.join(dir, '7_accuracy_eval_gsm8k.log'), text);
    const extracted = await extractMetrics(dir, disaggType.metrics(cfg, 'accuracy'));
    return disaggType.verdict({ testId: 't', category: 'accuracy', config: cfg, logDir: dir, ...extracted });
  }

  test('a run at the expected score passes; every run must pass', async () => {
    expect(await judge(table(0.9454))).toEqual({ passed: true, failures: [] });
    const twoRuns = await judge(`${table(0.9454)}\n${table(0.9083)}`);
    expect(twoRuns.passed).toBe(false);
    expect(twoRuns.failures).toEqual([expect.stringMatching(/^gsm8k \(flexible-extract\) run 2: actual 90\.83% < threshold 91\.3\d%/)]);
  });

  test('an accuracy config whose accuracy test is off fails, saying so', async () => {
    const off = { ...config, accuracy: { enable_accuracy_test: false } };
    expect((await judge(table(0.9454), off)).failures).toEqual(['accuracy.enable_accuracy_test is not true, so this accuracy test evaluated nothing']);
  });
});
