// The sequential CT perftest's report (rank 0): the reference's JSON layout and table, from every
// rank's runs in rank 0's clock. Per pattern and workload iteration, over the ranks that initiate
// its transfers (the senders for WRITE, the receivers for READ):
// - latency: last end - first start (ms);
// - isolated latency: the largest of their mean run times in the isolated phase (ms);
// - mean BW: the mean of (bytes the rank moves / its own run time), the pattern's own (GB/s = 1e9 B/s);
// - size: the matrix's sum in GB (1e9 bytes); num_senders: ranks with a non-zero row.
// Timestamps (*_ts) are seconds since the epoch, as rank 0's clock saw them.
import { colSum, rowSum, totalBytes, type TransferMatrix } from '../matrix.ts';
import { formatTable, f3 } from './text-table.ts';
import { maxOf, mean, minOf } from '../../common/stats.ts';

export type Span = [number, number] | null;

export interface PatternInfo {
  matrixFile: string;
  matrix: TransferMatrix;
  op: string;
  memType: string;
  shards: number;
  sleepBeforeSec: number;
  sleepAfterSec: number;
  metadata: Record<string, unknown>;
}

export interface SequentialRunData {
  patterns: PatternInfo[];
  /** [rank][pattern]: bytes the rank initiates in the pattern. */
  bytes: number[][];
  /** [rank][pattern]: the rank's mean run time in the isolated phase (ns), null when it initiates nothing. */
  isolationMeanNs: (number | null)[][];
  /** Per workload iteration: when it started and [rank][pattern] run spans (rank 0's clock, ns). */
  iterations: { startNs: number; spans: Span[][] }[];
  /** Rank 0's clock: run start, end of preparation, start of the isolated phase, end of the run (ns). */
  startNs: number;
  preparedNs: number;
  isolationStartNs: number;
  finishedNs: number;
  /** Add to rank 0's monotonic ns to get ns since the epoch. */
  epochOffsetNs: number;
  settings: Record<string, unknown>;
  /** What reading the config found (matrix_file bases, truncated cells). */
  notes?: string[];
}

export interface PatternResult {
  size: number;
  latency: number;
  isolated_latency: number;
  num_senders: number;
  mean_bw: number;
  min_start_ts: number;
  max_end_ts: number;
}

export interface SequentialReport {
  iterations_results: PatternResult[][];
  metadata: {
    ts: number;
    prepare_tp_time: number;
    /** When the isolated ("speed of light") phase started: kvbench's name. */
    sol_calculation_ts: number;
    finished_ts: number;
    iters: { start_ts: number; tps_start_ts: number[]; tps_end_ts: number[] }[];
    units: Record<string, string>;
    patterns: Record<string, unknown>[];
    [setting: string]: unknown;
  };
}

export function sequentialReport(d: SequentialRunData): SequentialReport {
  const ts = (ns: number) => (ns + d.epochOffsetNs) / 1e9;
  const ranks = d.bytes.length;
  const isolated = d.patterns.map((_, p) => {
    const means = d.isolationMeanNs.map((r) => r[p]).filter((m): m is number => m !== null);
    return maxOf(means, 0) / 1e6;
  });
  const results = d.iterations.map((it) =>
    d.patterns.map((pattern, p): PatternResult => {
      const spans = Array.from({ length: ranks }, (_, r) => ({ r, span: it.spans[r][p] })).filter((x) => x.span !== null);
      const start = minOf(spans.map((x) => x.span![0]), it.startNs);
      const end = maxOf(spans.map((x) => x.span![1]), it.startNs);
      return {
        size: totalBytes(pattern.matrix) / 1e9,
        latency: (end - start) / 1e6,
        isolated_latency: isolated[p],
        num_senders: pattern.matrix.filter((_, i) => rowSum(pattern.matrix, i) > 0).length,
        mean_bw: mean(spans.map((x) => d.bytes[x.r][p] / Math.max(1, x.span![1] - x.span![0]))),
        min_start_ts: ts(start),
        max_end_ts: ts(end),
      };
    }),
  );
  return {
    iterations_results: results,
    metadata: {
      ts: ts(d.startNs),
      prepare_tp_time: (d.preparedNs - d.startNs) / 1e9,
      sol_calculation_ts: ts(d.isolationStartNs),
      finished_ts: ts(d.finishedNs),
      iters: d.iterations.map((it, w) => ({
        start_ts: ts(it.startNs),
        tps_start_ts: results[w].map((r) => r.min_start_ts),
        tps_end_ts: results[w].map((r) => r.max_end_ts),
      })),
      ...d.settings,
      units: {
        size: 'GB (1e9 bytes)',
        latency: 'ms',
        isolated_latency: 'ms',
        mean_bw: 'GB/s (1e9 bytes/s)',
        ts: 's since the epoch (every *_ts)',
        prepare_tp_time: 's',
      },
      patterns: d.patterns.map((p) => ({
        matrix_file: p.matrixFile,
        xfer_op: p.op,
        mem_type: p.memType,
        shards: p.shards,
        sleep_before_launch_sec: p.sleepBeforeSec,
        sleep_after_launch_sec: p.sleepAfterSec,
        receivers: p.matrix.filter((_, j) => colSum(p.matrix, j) > 0).length,
        metadata: p.metadata,
      })),
      notes: d.notes ?? [],
    },
  };
}

/** One table per workload iteration, headed `Iteration i/n` as kvbench prints it (3 decimals). */
export function formatSequentialReport(r: SequentialReport): string {
  const headers = ['Transfer size (GB)', 'Latency (ms)', 'Isolated Latency (ms)', 'Num Senders', 'Mean BW (GB/s)'];
  return r.iterations_results
    .map((rows, w) => {
      const table = formatTable(headers, rows.map((x) => [f3(x.size), f3(x.latency), f3(x.isolated_latency), x.num_senders, f3(x.mean_bw)]));
      return `Iteration ${w + 1}/${r.iterations_results.length}\n${table}\n`;
    })
    .join('\n');
}
