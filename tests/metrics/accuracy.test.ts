import { DisaggBenchError } from '../../runners/common/errors.ts';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  evaluateAccuracy,
  hypothesisParamsFor,
  hypothesisThreshold,
  inverseNormalCdf,
  minimumDetectableEffect,
} from '../../framework/metrics/accuracy.ts';
import { extractLmEvalMetrics } from '../../framework/metrics/extractors/lm-eval.ts';

describe('inverseNormalCdf', () => {
  it('matches reference quantiles to 1e-12 (values from Python statistics.NormalDist)', () => {
    const cases: [number, number][] = [
      [0.05, -1.6448536269514726],
      [0.002, -2.8781617390954826],
      [0.01, -2.3263478740408408],
      [0.2, -0.8416212335729142],
      [0.975, 1.9599639845400536],
      [1e-10, -6.361340902404056],
      [1e-15, -7.941345326170995],
      [1e-300, -37.0470962993612],
      [0.999999, 4.753424308817089],
    ];
    for (const [p, z] of cases) expect(Math.abs(inverseNormalCdf(p) - z)).toBeLessThan(1e-12 * Math.max(1, Math.abs(z)));
    expect(inverseNormalCdf(0.5)).toBe(0);
    expect(inverseNormalCdf(0)).toBe(-Infinity);
    expect(() => inverseNormalCdf(1.5)).toThrow(DisaggBenchError);
  });
});

describe('hypothesis threshold', () => {
  it('gives about 91.34% for gsm8k expected 0.9454', () => {
    const p = hypothesisParamsFor({ dataset_name: 'gsm8k', expected_value: 0.9454 });
    expect(p).toEqual({ alpha: 0.05, beta: 0.2, sigma: 50, numSamples: 1319, higherIsBetter: true });
    expect(hypothesisThreshold(94.54, p)).toBeCloseTo(91.3375, 3);
    expect(minimumDetectableEffect(p)).toBeCloseTo(4.8411, 3);
  });

  it('mirrors the threshold when lower is better (slimpajama-6b)', () => {
    const p = hypothesisParamsFor({ dataset_name: 'SlimPajama-6B', expected_value: 4.5 });
    expect(p.higherIsBetter).toBe(false);
    const shift = 2.3263478740408408 * Math.sqrt((2 * 4.48 ** 2) / 86);
    expect(hypothesisThreshold(4.5, p)).toBeCloseTo(4.5 + shift, 10);
  });

  it('lets the config override defaults and falls back for unknown datasets', () => {
    expect(hypothesisParamsFor({ name: 'my_eval', expected_value: 0.5 })).toEqual({ alpha: 0.05, beta: 0.2, sigma: 50, numSamples: 1000, higherIsBetter: true });
    expect(hypothesisParamsFor({ dataset_name: 'gsm8k', expected_value: 0.9, num_samples: 200, alpha: 0.01 })).toMatchObject({ numSamples: 200, alpha: 0.01, sigma: 50 });
  });
});

describe('evaluateAccuracy', () => {
  const log = readFileSync(new URL('../fixtures/logs/lm-eval/7_accuracy_eval_gsm8k.log', import.meta.url), 'utf8');
  const { metrics } = extractLmEvalMetrics(log);

  it('fails when one run of two falls below the threshold, showing actual, threshold and inputs', () => {
    const result = evaluateAccuracy(metrics, [{ dataset_name: 'gsm8k', expected_value: 0.9454, filter_type: 'flexible-extract' }]);
    expect(result.passed).toBe(false);
    expect(result.checks.map((c) => [c.run, c.passed])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(result.failures).toEqual([
      'gsm8k (flexible-extract) run 2: actual 90.83% < threshold 91.34% [expected 94.54%, alpha 0.05, beta 0.2, sigma 50, n 1319, higher is better, theta 4.84%]: FAIL',
    ]);
    expect(result.checks[0].message).toMatch(/run 1: actual 94\.54% >= threshold 91\.34% .*: pass$/);
  });

  it('passes when every run passes (expected given in percent)', () => {
    const result = evaluateAccuracy(metrics, [{ dataset_name: 'gsm8k', expected_value: 92.5, filter_type: 'strict-match' }]);
    expect(result.failures).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.checks).toHaveLength(2);
  });

  it('fails for a missing dataset, a missing filter and an unsupported rule', () => {
    const result = evaluateAccuracy(metrics, [
      { dataset_name: 'mmlu', expected_value: 0.87 },
      { dataset_name: 'gsm8k', expected_value: 0.94, filter_type: 'none' },
      { dataset_name: 'gsm8k', expected_value: 0.94, threshold_type: 'absolute' },
    ]);
    expect(result.passed).toBe(false);
    expect(result.failures).toEqual([
      'mmlu (flexible-extract): no result in the accuracy log (datasets found: gsm8k)',
      'gsm8k (none): no result in the accuracy log (filters found: flexible-extract, strict-match)',
      "gsm8k: threshold_type 'absolute' is not supported (only hypothesis_test)",
    ]);
  });

  it('fails with nothing configured', () => {
    expect(evaluateAccuracy(metrics, []).passed).toBe(false);
  });
});
