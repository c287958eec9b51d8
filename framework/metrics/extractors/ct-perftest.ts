// The CT perftest's JSON report (runners/xfer/benches/ct-report.ts) as metrics. GB = 1e9 bytes,
// GB/s = 1e9 bytes/s. Per-rank bandwidths carry the label {rank}.
import type { ExtractResult } from '../metric.ts';
import { numberMetric, parseJsonReport } from './json-report.ts';

const TOTALS: Array<[field: string, name: string, unit: string, higherIsBetter: boolean]> = [
  ['total_latency_s', 'TOTAL_LATENCY_S', 's', false],
  ['avg_iter_latency_ms', 'AVG_ITER_LATENCY_MS', 'ms', false],
  ['total_size_gb', 'TOTAL_SIZE_GB', 'GB', true],
  ['aggregate_bw_gbps', 'AGGREGATE_BW_GBPS', 'GB/s', true],
  ['avg_bw_gbps', 'AVG_BW_GBPS', 'GB/s', true],
];

const PER_RANK: Array<[field: string, name: string]> = [
  ['avg_bw_gbps', 'BW_GBPS'],
  ['min_bw_gbps', 'MIN_BW_GBPS'],
  ['max_bw_gbps', 'MAX_BW_GBPS'],
];

export function extractCtPerftestMetrics(text: string): ExtractResult {
  const out: ExtractResult = { metrics: [], problems: [] };
  const { report, problem } = parseJsonReport(text, 'ct-perftest');
  if (!report) return { metrics: [], problems: [problem!] };
  // Written while the run went on (it crashed or was stopped): the numbers of the iterations done are kept, and the test fails saying so.
  if (report.partial === true) {
    out.problems.push(`the report is partial: the run ended after ${report.completed_iterations} of ${report.iterations} timed iterations`);
  }
  for (const [field, name, unit, higherIsBetter] of TOTALS) numberMetric(out, field, report[field], { name, unit, higherIsBetter, labels: {} });
  const perRank = report.per_rank;
  if (!Array.isArray(perRank) || perRank.length === 0) {
    out.problems.push('per_rank: no rank moved any bytes');
    return out;
  }
  for (const entry of perRank as Record<string, unknown>[]) {
    for (const [field, name] of PER_RANK) {
      numberMetric(out, `per_rank[rank ${entry.rank}].${field}`, entry[field], { name, unit: 'GB/s', higherIsBetter: true, labels: { rank: Number(entry.rank) } });
    }
  }
  return out;
}
