import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractLmcacheMetrics } from '../../../framework/metrics/extractors/lmcache.ts';

const log = (name: string) => readFileSync(new URL(`../../fixtures/logs/nixl/${name}`, import.meta.url), 'utf8');
const get = (metrics: ReturnType<typeof extractLmcacheMetrics>['metrics'], name: string) => metrics.find((m) => m.name === name);

describe('LMCache extractor', () => {
  it("reads LMCache's sender log; its 'GB/s' pure throughput is bytes / 2^30, so GiB/s", () => {
    const { metrics, problems } = extractLmcacheMetrics(log('lmcache-sender.log'));
    expect(problems).toEqual([]);
    expect(get(metrics, 'COMMITS')?.value).toBe(4);
    expect(get(metrics, 'COMMIT_TIME_MS_AVG')?.value).toBeCloseTo((33.7618 + 25.6334 + 26.4169 + 23.8715) / 4, 6);
    expect(get(metrics, 'COMMIT_WAIT_MS_AVG')?.value).toBeCloseTo((14.7957 + 13.6851 + 14.7857 + 12.6741) / 4, 6);
    expect(get(metrics, 'PURE_THROUGHPUT_GIBPS_MIN')).toMatchObject({ value: 211.1577, unit: 'GiB/s' });
    expect(get(metrics, 'PURE_THROUGHPUT_GIBPS_MAX')?.value).toBe(344.2922);
    expect(get(metrics, 'PURE_THROUGHPUT_GBPS_MIN')?.value).toBeCloseTo(211.1577 * 1.073741824, 6);
    expect(get(metrics, 'SENT_OBJECTS')).toMatchObject({ value: 500, labels: { round: 1 } });
    expect(get(metrics, 'SEND_TIME_S')?.value).toBe(0.117705);
    // "Throughput: 132.75 GB/s" is calculate_throughput()'s bytes / 2^30 too: 132.75 GiB/s
    expect(get(metrics, 'THROUGHPUT_GIBPS')).toMatchObject({ value: 132.75, unit: 'GiB/s', labels: { round: 1 } });
    expect(get(metrics, 'THROUGHPUT_GBPS')?.value).toBeCloseTo(132.75 * 1.073741824, 9);
  });

  it("reads LMCache's receiver log: all objects received and verified", () => {
    const { metrics, problems } = extractLmcacheMetrics(log('lmcache-receiver.log'));
    expect(problems).toEqual([]);
    expect(get(metrics, 'RECEIVED_OBJECTS')?.value).toBe(500);
    expect(get(metrics, 'VERIFIED_ROUNDS')?.value).toBe(1);
  });

  it('reads the cache engine\'s "Mean throughput: m ± s GB/s" (also as the mis-encoded Â±) as GiB/s, as LMCache computes it', () => {
    const { metrics } = extractLmcacheMetrics(log('lmcache-cache-engine.log'));
    expect(get(metrics, 'MEAN_THROUGHPUT_GIBPS')?.value).toBe(70.97);
    expect(get(metrics, 'THROUGHPUT_STD_GIBPS')?.value).toBe(7.66);
    expect(get(metrics, 'MEAN_THROUGHPUT_GBPS')?.value).toBeCloseTo(70.97 * 1.073741824, 9);
    const plain = extractLmcacheMetrics('Mean throughput: 1.50 ± 0.25 GB/s').metrics;
    expect(plain.map((m) => [m.name, m.value])).toEqual([
      ['MEAN_THROUGHPUT_GBPS', 1.5 * 1.073741824],
      ['MEAN_THROUGHPUT_GIBPS', 1.5],
      ['THROUGHPUT_STD_GBPS', 0.25 * 1.073741824],
      ['THROUGHPUT_STD_GIBPS', 0.25],
    ]);
  });

  it('every bare LMCache figure is GiB/s labelled GB/s, each one treated alike', () => {
    // 6.25 "GB/s" from LMCache = 6.25 GiB/s = 6.7108864 GB/s, whatever the line
    const lines = [
      'Pure transfer throughput: 6.25 GB/s',
      'Throughput: 6.25 GB/s',
      'Retrieval throughput: 6.25 GB/s',
      'Transfer throughput: 6.25 GB/s',
      'Put throughput: 6.25 GB/s',
      'Get throughput: 6.25 GB/s',
      'Min throughput: 6.25 GB/s',
      'Max throughput: 6.25 GB/s',
      'Average throughput over 5 rounds: 6.25 GB/s',
      'Mean throughput: 6.25 ± 0.00 GB/s',
    ];
    for (const line of lines) {
      const { metrics } = extractLmcacheMetrics(line);
      const gb = metrics.filter((m) => m.unit === 'GB/s' && m.value !== 0);
      const gib = metrics.filter((m) => m.unit === 'GiB/s' && m.value !== 0);
      expect(gb.length, line).toBeGreaterThan(0);
      expect(gb.length, line).toBe(gib.length);
      for (const m of gb) expect(m.value, `${line} ${m.name}`).toBeCloseTo(6.7108864, 12);
      for (const m of gib) expect(m.value, `${line} ${m.name}`).toBe(6.25);
    }
    // this project's lines state both units: taken as printed
    expect(extractLmcacheMetrics('Throughput: 2.56 GB/s (2.39 GiB/s)').metrics.map((m) => [m.name, m.value])).toEqual([['THROUGHPUT_GBPS', 2.56], ['THROUGHPUT_GIBPS', 2.39]]);
    expect(extractLmcacheMetrics('Min throughput: 2.56 GB/s (2.39 GiB/s)').metrics.map((m) => m.value)).toEqual([2.56, 2.39]);
  });

  it("reads the kvpipe command's output: explicit GB/s and GiB/s, two rounds, verification", () => {
    const { metrics, problems } = extractLmcacheMetrics(log('kvpipe-shm.log'));
    expect(problems).toEqual([]);
    expect(metrics.filter((m) => m.name === 'THROUGHPUT_GBPS').map((m) => m.labels.round)).toEqual([1, 2]);
    const gb = metrics.find((m) => m.name === 'THROUGHPUT_GBPS')!.value;
    const gib = metrics.find((m) => m.name === 'THROUGHPUT_GIBPS')!.value;
    expect(gib).toBeCloseTo(gb / 1.073741824, 1);
    expect(get(metrics, 'COMMITS')?.value).toBe(4);
    expect(get(metrics, 'VERIFIED_ROUNDS')?.value).toBe(2);
    // the log holds each round's bytes (16 x 8 MiB) and time (6 decimals): the exact figures, not the 2-decimal prints
    const rounds = [0.052367, 0.047127].map((sec) => (16 * 8388608) / sec / 1e9);
    expect(metrics.filter((m) => m.name === 'THROUGHPUT_GBPS').map((m) => m.value)).toEqual(rounds);
    expect(get(metrics, 'MEAN_THROUGHPUT_GBPS')).toMatchObject({ unit: 'GB/s' });
    expect(get(metrics, 'MEAN_THROUGHPUT_GBPS')!.value).toBeCloseTo((rounds[0] + rounds[1]) / 2, 12);
    expect(get(metrics, 'MEAN_THROUGHPUT_GBPS')!.value).toBeCloseTo(2.71, 2); // as printed, to its 2 decimals
    expect(get(metrics, 'MEAN_THROUGHPUT_GIBPS')!.value).toBeCloseTo(2.52, 2);
    expect(get(metrics, 'MEAN_THROUGHPUT_GBPS')!.rounded).toBeUndefined();
  });

  it('reports a data mismatch as a problem', () => {
    const { problems } = extractLmcacheMetrics('[rank 1] Data mismatch in round 1: object 5 (round 0) byte 4: expected 0x00, got 0x08\n');
    expect(problems).toContain('line 1: Data mismatch in round 1: object 5 (round 0) byte 4: expected 0x00, got 0x08');
  });
});
