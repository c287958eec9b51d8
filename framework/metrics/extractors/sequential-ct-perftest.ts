// The sequential CT perftest's JSON report (the reference's layout, runners/xfer/benches/
// sequential-report.ts) as metrics, per pattern (its index in the config) and workload iteration
// (from 1): LATENCY_MS and MEAN_BW_GBPS {pattern, iteration}; ISOLATED_LATENCY_MS and
// TRANSFER_SIZE_GB {pattern}; WORKLOAD_LATENCY_MS {iteration}: from the iteration's start to the
// end of its last transfer. GB = 1e9 bytes, GB/s = 1e9 bytes/s. kvbench's own JSON reads the
// same; where it writes null (a pattern no rank ran, a pattern rank 0 sent nothing in) there is no
// value to read, and that is not a problem.
import type { ExtractResult } from '../metric.ts';
import { maxOf } from '../../../runners/common/stats.ts';
import { numberMetric, parseJsonReport } from './json-report.ts';

export function extractSequentialCtPerftestMetrics(text: string): ExtractResult {
  const out: ExtractResult = { metrics: [], problems: [] };
  const { report, problem } = parseJsonReport(text, 'sequential-ct-perftest');
  if (!report) return { metrics: [], problems: [problem!] };
  const iterations = report.iterations_results;
  if (!Array.isArray(iterations) || iterations.length === 0 || !iterations.every(Array.isArray)) {
    return { metrics: [], problems: ['iterations_results: expected a list of workload iterations, each a list of patterns'] };
  }
  const metadata = report.metadata as { partial?: unknown; completed_workload_iters?: unknown; workload_iters?: unknown } | undefined;
  if (metadata?.partial === true) {
    out.problems.push(`the report is partial: the run ended after ${metadata.completed_workload_iters} of ${metadata.workload_iters} workload iterations`);
  }
  const patterns = (iterations[0] as unknown[]).length;
  if (iterations.some((it) => (it as unknown[]).length !== patterns)) out.problems.push(`iterations_results: the iterations do not all have ${patterns} patterns`);
  (iterations as Record<string, unknown>[][]).forEach((results, w) => {
    results.forEach((r, p) => {
      const at = `iterations_results[${w}][${p}]`;
      const labels = { pattern: p, iteration: w + 1 };
      if (r.latency === null) return; // kvbench: no rank ran the pattern
      numberMetric(out, `${at}.latency`, r.latency, { name: 'LATENCY_MS', unit: 'ms', higherIsBetter: false, labels });
      numberMetric(out, `${at}.mean_bw`, r.mean_bw, { name: 'MEAN_BW_GBPS', unit: 'GB/s', higherIsBetter: true, labels });
      if (w > 0) return;
      numberMetric(out, `${at}.isolated_latency`, r.isolated_latency, { name: 'ISOLATED_LATENCY_MS', unit: 'ms', higherIsBetter: false, labels: { pattern: p } });
      numberMetric(out, `${at}.size`, r.size, { name: 'TRANSFER_SIZE_GB', unit: 'GB', labels: { pattern: p } });
    });
  });
  const iters = (report.metadata as { iters?: { start_ts?: unknown; tps_end_ts?: unknown }[] } | undefined)?.iters ?? [];
  iters.forEach((it, w) => {
    const ends = (Array.isArray(it.tps_end_ts) ? (it.tps_end_ts as unknown[]) : []).filter((e): e is number => typeof e === 'number');
    const value = typeof it.start_ts === 'number' && ends.length ? (maxOf(ends) - it.start_ts) * 1000 : undefined;
    numberMetric(out, `metadata.iters[${w}]`, value, { name: 'WORKLOAD_LATENCY_MS', unit: 'ms', higherIsBetter: false, labels: { iteration: w + 1 } });
  });
  return out;
}
