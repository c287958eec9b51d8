// The CT perftest's report (rank 0), from every rank's timed runs in rank 0's clock.
// Definitions (GB = 1e9 bytes, GB/s = 1e9 bytes/s; bytes per ns = GB/s):
// - an iteration's latency: last end - first start over the ranks that initiate transfers;
// - total latency: last end - first start over all ranks and timed iterations (barriers included),
//   kvbench's "Total time (s)"; kvbench's "Avg latency/iter (s)" is total latency / iterations;
// - size per iteration: sum of the matrix;
// - a rank's bandwidth in one iteration: the bytes it initiates / its own run time; its average is
//   bytes * iterations / total run time, min and max are over iterations; "average bandwidth by
//   rank" is the mean of the ranks' averages; aggregate bandwidth = size / average latency.
import { formatTable, f3 } from './text-table.ts';
import { mean } from './common/stats.ts';

export interface RankRuns {
  rank: number;
  /** Bytes this rank initiates per iteration (WRITE: its row; READ: its column). */
  bytes: number;
  /** [start, end] of each timed iteration, rank 0's clock, ns. */
  spans: [number, number][];
}

export interface CtRunInfo {
  matrixFile: string;
  ranks: number;
  backend: string;
  xferOp: string;
  shards: number;
  memType: string;
  iterations: number;
  warmupIterations: number;
  verifiedBuffers: boolean;
  bytesPerIteration: number;
  /** What reading the config found (matrix_file's base, truncated cells). */
  notes?: string[];
}

export interface CtRankReport {
  rank: number;
  bytes_per_iteration: number;
  avg_latency_ms: number;
  avg_bw_gbps: number;
  min_bw_gbps: number;
  max_bw_gbps: number;
}

export interface CtReport {
  benchmark: 'ct-perftest';
  matrix_file: string;
  ranks: number;
  backend: string;
  xfer_op: string;
  shards: number;
  mem_type: string;
  iterations: number;
  warmup_iterations: number;
  verified_buffers: boolean;
  total_latency_s: number;
  /** kvbench's "Avg latency/iter (s)": total latency / iterations. */
  avg_latency_per_iter_s: number;
  avg_iter_latency_ms: number;
  min_iter_latency_ms: number;
  max_iter_latency_ms: number;
  total_size_gb: number;
  bytes_per_iteration: number;
  aggregate_bw_gbps: number;
  avg_bw_gbps: number;
  per_rank: CtRankReport[];
  units: { size: string; bandwidth: string };
  notes: string[];
}

export function ctReport(info: CtRunInfo, runs: RankRuns[]): CtReport {
  const active = runs.filter((r) => r.bytes > 0 && r.spans.length > 0).sort((a, b) => a.rank - b.rank);
  const iterLatencyNs = Array.from({ length: info.iterations }, (_, k) => {
    const spans = active.map((r) => r.spans[k]);
    return spans.length === 0 ? 0 : Math.max(...spans.map((s) => s[1])) - Math.min(...spans.map((s) => s[0]));
  });
  const all = active.flatMap((r) => r.spans);
  const totalNs = all.length === 0 ? 0 : Math.max(...all.map((s) => s[1])) - Math.min(...all.map((s) => s[0]));
  const avgIterNs = mean(iterLatencyNs);
  const perRank = active.map((r): CtRankReport => {
    const durations = r.spans.map(([s, e]) => Math.max(1, e - s));
    const bws = durations.map((d) => r.bytes / d);
    return {
      rank: r.rank,
      bytes_per_iteration: r.bytes,
      avg_latency_ms: mean(durations) / 1e6,
      avg_bw_gbps: r.bytes / mean(durations),
      min_bw_gbps: Math.min(...bws),
      max_bw_gbps: Math.max(...bws),
    };
  });
  return {
    benchmark: 'ct-perftest',
    matrix_file: info.matrixFile,
    ranks: info.ranks,
    backend: info.backend,
    xfer_op: info.xferOp,
    shards: info.shards,
    mem_type: info.memType,
    iterations: info.iterations,
    warmup_iterations: info.warmupIterations,
    verified_buffers: info.verifiedBuffers,
    total_latency_s: totalNs / 1e9,
    avg_latency_per_iter_s: info.iterations > 0 ? totalNs / 1e9 / info.iterations : 0,
    avg_iter_latency_ms: avgIterNs / 1e6,
    min_iter_latency_ms: iterLatencyNs.length ? Math.min(...iterLatencyNs) / 1e6 : 0,
    max_iter_latency_ms: iterLatencyNs.length ? Math.max(...iterLatencyNs) / 1e6 : 0,
    total_size_gb: info.bytesPerIteration / 1e9,
    bytes_per_iteration: info.bytesPerIteration,
    aggregate_bw_gbps: avgIterNs > 0 ? info.bytesPerIteration / avgIterNs : 0,
    avg_bw_gbps: mean(perRank.map((r) => r.avg_bw_gbps)),
    per_rank: perRank,
    units: { size: 'GB (1e9 bytes)', bandwidth: 'GB/s (1e9 bytes/s)' },
    notes: info.notes ?? [],
  };
}

/** kvbench's table (its columns first, as it prints them: 6 decimals), the project's columns after it. */
export const CT_TABLE_HEADERS = ['Iters', 'Total time (s)', 'Avg latency/iter (s)', 'Total size (GB)', 'Avg BW by rank (GB/s)', 'Aggregate BW (GB/s)', 'Xfer latency/iter (ms)'];

/** The report as stdout shows it: a summary line, kvbench's "Performance metrics" table, the per-rank bandwidths. */
export function formatCtReport(r: CtReport): string {
  const head =
    `CT perftest: ${r.matrix_file}, ${r.ranks} ranks, backend ${r.backend}, ${r.xfer_op}, ${r.shards} shard(s), ` +
    `mem_type ${r.mem_type}, ${r.iterations} iteration(s) after ${r.warmup_iterations} warm-up` +
    `${r.verified_buffers ? ', every receive buffer verified' : ''}`;
  const f6 = (x: number) => x.toFixed(6);
  const totals = formatTable(CT_TABLE_HEADERS, [
    [r.iterations, f6(r.total_latency_s), f6(r.avg_latency_per_iter_s), f6(r.total_size_gb), f6(r.avg_bw_gbps), f6(r.aggregate_bw_gbps), f6(r.avg_iter_latency_ms)],
  ]);
  const ranks = formatTable(
    ['Rank', 'Bytes/iter', 'Avg latency (ms)', 'Avg BW (GB/s)', 'Min BW (GB/s)', 'Max BW (GB/s)'],
    r.per_rank.map((x) => [x.rank, x.bytes_per_iteration, f3(x.avg_latency_ms), f3(x.avg_bw_gbps), f3(x.min_bw_gbps), f3(x.max_bw_gbps)]),
  );
  return `${head}\n\nPerformance metrics:\n${totals}\n\n${ranks}\n`;
}
