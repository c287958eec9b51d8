// aiperf's summary export, in the shape its documentation gives (profile_export_aiperf.json: per
// metric {unit, avg, p50, ..., min, max, std}, scalars with only avg, error_request_count absent
// when nothing failed), read per concurrency_<c>/ folder as run_benchmark_aiperf.sh leaves them.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractMetrics } from '../../../framework/metrics/log-parser.ts';
import { aiperfConcurrency, extractAiperfMetrics } from '../../../framework/metrics/extractors/aiperf.ts';
import { AIPERF_SUMMARY } from '../../../framework/types/serving/metrics.ts';

const logDir = path.resolve(import.meta.dirname, '../../fixtures/logs/aiperf');

describe('aiperf summaries', () => {
  it('per concurrency: benchmark_serving names only where the definition is the same', async () => {
    const { metrics, problems } = await extractMetrics(logDir, [{ logFile: AIPERF_SUMMARY, extractor: 'aiperf' }]);
    expect(problems).toEqual([]);
    const at = (c: number, name: string) => metrics.find((m) => m.labels.concurrency === c && m.name === name);
    expect(at(8, 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 85, unit: 'ms', higherIsBetter: false });
    expect(at(8, 'SERVER_MEAN_TTFT')?.value).toBe(88.5);
    expect(at(8, 'SERVER_P99_E2EL')?.value).toBe(790.5);
    // aiperf's inter_token_latency is (latency - TTFT) / (OSL - 1): benchmark_serving's TPOT.
    expect(at(8, 'SERVER_MEDIAN_TPOT')?.value).toBe(5.3);
    expect(at(8, 'SERVER_MEDIAN_ITL')).toBeUndefined();
    expect(at(8, 'AIPERF_P99_INTER_CHUNK_LATENCY')?.value).toBe(9.8);
    // 1 / ITL per user, not benchmark_serving's user throughput: kept under aiperf's own name.
    expect(at(8, 'SERVER_USER_THROUGHPUT')).toBeUndefined();
    expect(at(8, 'AIPERF_AVG_OUTPUT_TOKEN_THROUGHPUT_PER_USER')).toMatchObject({ value: 185.2, unit: 'tok/s/user' });
    expect(at(8, 'SERVER_SUCCESSFUL_REQUESTS')?.value).toBe(64);
    expect(at(8, 'SERVER_FAILED_REQUESTS')?.value).toBe(0);
    expect(at(8, 'SERVER_REQUEST_THROUGHPUT')).toMatchObject({ value: 12.5, unit: 'req/s' });
    expect(at(8, 'SERVER_DURATION')).toMatchObject({ value: 5.12, unit: 's' });
    expect(at(8, 'SERVER_TOTAL_INPUT_TOKENS')?.value).toBe(65536);
    expect(at(16, 'SERVER_FAILED_REQUESTS')?.value).toBe(3);
    expect(at(16, 'SERVER_SUCCESSFUL_REQUESTS')?.value).toBe(125);
    expect(at(16, 'SERVER_P90_TTFT')?.value).toBe(170);
  });

  it('a summary outside concurrency_<c>/, a truncated one, and one without a valid request are problems', () => {
    expect(aiperfConcurrency('concurrency_32/profile_export_aiperf.json')).toBe(32);
    expect(aiperfConcurrency('concurrency_32/run1/profile_export_aiperf.json')).toBe(32);
    expect(extractAiperfMetrics('{}', undefined, 'profile_export_aiperf.json').problems[0]).toMatch(/concurrency is unknown/);
    expect(extractAiperfMetrics('{"request_count": {"unit": "req', undefined, 'concurrency_4/profile_export_aiperf.json').problems[0]).toMatch(/does not parse/);
    expect(extractAiperfMetrics('{"benchmark_duration": {"unit": "sec", "avg": 1}}', undefined, 'concurrency_4/p.json').problems).toEqual([
      'no request_count: aiperf recorded no valid request',
    ]);
  });
});
