import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractNixlbenchMetrics } from '../../../framework/metrics/extractors/nixlbench.ts';

const log = (name: string) => readFileSync(new URL(`../../fixtures/logs/nixl/${name}`, import.meta.url), 'utf8');
const value = (metrics: ReturnType<typeof extractNixlbenchMetrics>['metrics'], name: string, labels: Record<string, unknown>) =>
  metrics.find((m) => m.name === name && Object.entries(labels).every(([k, v]) => m.labels[k] === v))?.value;

describe('nixlbench extractor', () => {
  it('reads the current format: every block size, the EFA suite figures, op type from the banner', () => {
    const { metrics, problems } = extractNixlbenchMetrics(log('nixlbench-current.log'));
    expect(problems).toEqual([]);
    const bw = metrics.filter((m) => m.name === 'BW_GBPS');
    expect(bw.map((m) => m.labels.block_size)).toEqual(Array.from({ length: 15 }, (_, i) => 4096 * 2 ** i));
    expect(bw[14]).toEqual({ name: 'BW_GBPS', value: 46.48, unit: 'GB/s', higherIsBetter: true, labels: { block_size: 67108864, batch_size: 1, op_type: 'WRITE' } });
    expect(value(metrics, 'AVG_LAT_US', { block_size: 1048576 })).toBe(74.3);
    expect(value(metrics, 'AVG_LAT_US', { block_size: 16777216 })).toBe(408.6);
    for (const name of ['AVG_PREP_US', 'P99_PREP_US', 'AVG_POST_US', 'P99_POST_US', 'AVG_TX_US', 'P99_TX_US']) {
      expect(metrics.filter((m) => m.name === name)).toHaveLength(15);
    }
    expect(metrics.some((m) => m.name === 'AGG_BW_GBPS')).toBe(false);
  });

  it('reads the aggregate and network-utilisation columns of a pairwise run with more than 2 ranks', () => {
    const { metrics, problems } = extractNixlbenchMetrics(log('nixlbench-pairwise4.log'));
    expect(problems).toEqual([]);
    expect(value(metrics, 'AGG_BW_GBPS', { block_size: 65536 })).toBe(2.475);
    expect(value(metrics, 'NETWORK_UTIL_PCT', { block_size: 65536 })).toBe(2.475);
    expect(value(metrics, 'BW_GBPS', { block_size: 65536, op_type: 'READ' })).toBe(1.25);
    expect(value(metrics, 'AVG_LAT_US', { block_size: 4096 })).toBe(49.2);
  });

  it('reads the older format (MiB/s, GiB/s and GB/s columns after the latency)', () => {
    const { metrics, problems } = extractNixlbenchMetrics(log('nixlbench-older.log'));
    expect(problems).toEqual([]);
    const labels = { block_size: 4096, batch_size: 64 };
    expect(value(metrics, 'AVG_LAT_US', labels)).toBe(3.11355);
    expect(value(metrics, 'BW_MIBPS', labels)).toBe(1254.6);
    expect(value(metrics, 'BW_GIBPS', labels)).toBe(1.22519);
    expect(value(metrics, 'BW_GBPS', labels)).toBe(1.31554);
    expect(metrics.find((m) => m.name === 'BW_GIBPS')?.unit).toBe('GiB/s');
    expect(metrics.filter((m) => m.name === 'BW_GBPS')).toHaveLength(6);
  });

  it('reads the sweep command\'s own output: two op types, rank prefixes, consistency line', () => {
    const { metrics, problems } = extractNixlbenchMetrics(log('sweep-shm.log'));
    expect(problems).toEqual([]);
    const bw = metrics.filter((m) => m.name === 'BW_GBPS');
    expect(bw.filter((m) => m.labels.op_type === 'READ').map((m) => m.labels.block_size)).toEqual(Array.from({ length: 9 }, (_, i) => 4096 * 2 ** i));
    expect(bw.filter((m) => m.labels.op_type === 'WRITE')).toHaveLength(9);
    expect(bw.every((m) => m.value > 0)).toBe(true);
  });

  it('reports a truncated row and a failed consistency check as problems', () => {
    const truncated = extractNixlbenchMetrics(log('nixlbench-truncated.log'));
    expect(truncated.metrics.filter((m) => m.name === 'BW_GBPS')).toHaveLength(3);
    expect(truncated.problems).toEqual([expect.stringMatching(/line 36: a table row with 4 values where the header has 10 \(truncated\?\)/)]);
    const failed = extractNixlbenchMetrics(`${log('nixlbench-current.log')}\nConsistency check failed for iov 0:3\n`);
    expect(failed.problems).toEqual([expect.stringMatching(/Consistency check failed for iov 0:3/)]);
  });

  it('says so when the log has no table, or a header without rows', () => {
    expect(extractNixlbenchMetrics('Connecting to ETCD at http://localhost:2379\nFailed to acquire lock\n').problems[0]).toMatch(/no nixlbench table/);
    const header = log('nixlbench-current.log').split('\n').slice(0, 36).join('\n');
    expect(extractNixlbenchMetrics(header).problems).toEqual([expect.stringMatching(/table without rows/)]);
  });

  it('tells tables of the same op apart by number', () => {
    const twice = `${log('nixlbench-older.log')}\n${log('nixlbench-older.log')}`;
    const tables = extractNixlbenchMetrics(twice).metrics.filter((m) => m.name === 'BW_GBPS' && m.labels.block_size === 4096).map((m) => m.labels.table);
    expect(tables).toEqual([1, 2]);
  });
});
