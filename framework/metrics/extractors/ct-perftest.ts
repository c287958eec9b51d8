// The CT perftest's results as metrics, from either of:
// - the JSON report of this project's command (runners/xfer/benches/ct-report.ts), full precision;
// - kvbench's "Performance metrics" table (its ct-perftest writes no JSON; this project's prints
//   the same table with its own columns after kvbench's), read by header name:
//   `Iters  Total time (s)  Avg latency/iter (s)  Total size (GB)`.
// GB = 1e9 bytes, GB/s = 1e9 bytes/s. Per-rank bandwidths (JSON only) carry the label {rank}.
import type { ExtractResult } from '../metric.ts';
import { numberMetric, parseJsonReport } from './json-report.ts';
import { logLines } from './launch-prefix.ts';

type Total = [field: string, header: string | undefined, name: string, unit: string, higherIsBetter: boolean];

/** JSON field, table header (kvbench's first four, then this project's), metric. */
const TOTALS: Total[] = [
  ['total_latency_s', 'Total time (s)', 'TOTAL_LATENCY_S', 's', false],
  ['avg_latency_per_iter_s', 'Avg latency/iter (s)', 'AVG_LATENCY_PER_ITER_S', 's', false],
  ['total_size_gb', 'Total size (GB)', 'TOTAL_SIZE_GB', 'GB', true],
  ['avg_bw_gbps', 'Avg BW by rank (GB/s)', 'AVG_BW_GBPS', 'GB/s', true],
  ['aggregate_bw_gbps', 'Aggregate BW (GB/s)', 'AGGREGATE_BW_GBPS', 'GB/s', true],
  ['avg_iter_latency_ms', 'Xfer latency/iter (ms)', 'AVG_ITER_LATENCY_MS', 'ms', false],
];
const KVBENCH_HEADERS = ['Iters', 'Total time (s)', 'Avg latency/iter (s)', 'Total size (GB)'];

const PER_RANK: Array<[field: string, name: string]> = [
  ['avg_bw_gbps', 'BW_GBPS'],
  ['min_bw_gbps', 'MIN_BW_GBPS'],
  ['max_bw_gbps', 'MAX_BW_GBPS'],
];

export function extractCtPerftestMetrics(text: string): ExtractResult {
  return /^\s*[{[]/.test(text) ? fromJson(text) : fromTable(text);
}

function fromJson(text: string): ExtractResult {
  const out: ExtractResult = { metrics: [], problems: [] };
  const { report, problem } = parseJsonReport(text, 'ct-perftest');
  if (!report) return { metrics: [], problems: [problem!] };
  // Written while the run went on (it crashed or was stopped): the numbers of the iterations done are kept, and the test fails saying so.
  if (report.partial === true) {
    out.problems.push(`the report is partial: the run ended after ${report.completed_iterations} of ${report.iterations} timed iterations`);
  }
  for (const [field, , name, unit, higherIsBetter] of TOTALS) numberMetric(out, field, report[field], { name, unit, higherIsBetter, labels: {} });
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

/** The last table whose header starts with kvbench's four columns (tabulate: cells 2+ spaces apart). */
function fromTable(text: string): ExtractResult {
  const out: ExtractResult = { metrics: [], problems: [] };
  const lines = logLines(text);
  const cells = (line: string | undefined) => (line ?? '').trim().split(/\s{2,}/);
  const at = lines.findLastIndex((line) => KVBENCH_HEADERS.every((h, i) => cells(line)[i] === h));
  if (at < 0) {
    return { metrics: [], problems: [`no CT perftest report: neither a JSON report nor kvbench's table (${KVBENCH_HEADERS.join(' | ')})`] };
  }
  const headers = cells(lines[at]);
  const values = cells(lines[at + 2]);
  if (!/^-+(\s+-+)*$/.test((lines[at + 1] ?? '').trim()) || values.length !== headers.length) {
    return { metrics: [], problems: [`kvbench's table is cut short after its header (line ${at + 1})`] };
  }
  for (const [, header, name, unit, higherIsBetter] of TOTALS) {
    const column = headers.indexOf(header!);
    if (column < 0) continue; // this project's columns: only in its own table
    numberMetric(out, `table column '${header}'`, Number(values[column]), { name, unit, higherIsBetter, labels: {} });
  }
  return out;
}
