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
import { mean, RunningStats } from '../../common/stats.ts';

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
  /** Only in a report written while the run goes on: it covers `completed_iterations` of `iterations`. */
  partial?: true;
  completed_iterations?: number;
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

/**
 * The report built as the run goes, in memory that does not grow with the iterations: the ranks'
 * spans arrive in chunks of consecutive timed iterations (all ranks' same iterations at once) and
 * are folded into running statistics, so a million iterations cost what a thousand do, and the
 * report can be written after every chunk (partial) and again at the end.
 */
export class CtAccumulator {
  private readonly iterLatency = new RunningStats();
  private firstStart = Infinity;
  private lastEnd = -Infinity;
  private readonly ranks = new Map<number, { bytes: number; durations: RunningStats; minBw: number; maxBw: number }>();

  constructor(readonly info: CtRunInfo) {}

  /** Timed iterations folded in so far. */
  get iterations(): number {
    return this.iterLatency.count;
  }

  /** One chunk: every rank's runs of the same consecutive iterations (ranks that initiate nothing included). */
  add(chunk: readonly RankRuns[]): this {
    const active = chunk.filter((r) => r.bytes > 0 && r.spans.length > 0);
    const length = active.length ? active[0].spans.length : chunk[0]?.spans.length ?? 0;
    for (let k = 0; k < length; k++) {
      let start = Infinity;
      let end = -Infinity;
      for (const r of active) {
        const [s, e] = r.spans[k];
        if (s < start) start = s;
        if (e > end) end = e;
      }
      this.iterLatency.add(active.length === 0 ? 0 : end - start);
      if (start < this.firstStart) this.firstStart = start;
      if (end > this.lastEnd) this.lastEnd = end;
    }
    for (const r of active) {
      let rank = this.ranks.get(r.rank);
      if (!rank) this.ranks.set(r.rank, (rank = { bytes: r.bytes, durations: new RunningStats(), minBw: Infinity, maxBw: -Infinity }));
      for (const [s, e] of r.spans) {
        const duration = Math.max(1, e - s);
        rank.durations.add(duration);
        const bw = r.bytes / duration;
        if (bw < rank.minBw) rank.minBw = bw;
        if (bw > rank.maxBw) rank.maxBw = bw;
      }
    }
    return this;
  }

  /**
   * The report of the iterations folded so far. `partial`: the run has not finished; the report
   * says so and how many of the planned iterations it covers (a crash keeps what was written).
   */
  report(options: { partial?: boolean } = {}): CtReport {
    const { info } = this;
    const avgIterNs = this.iterLatency.mean;
    const totalS = this.lastEnd > this.firstStart ? (this.lastEnd - this.firstStart) / 1e9 : 0;
    const perRank = [...this.ranks.entries()].sort(([a], [b]) => a - b).map(([rank, r]): CtRankReport => ({
      rank,
      bytes_per_iteration: r.bytes,
      avg_latency_ms: r.durations.mean / 1e6,
      avg_bw_gbps: r.bytes / r.durations.mean,
      min_bw_gbps: r.minBw,
      max_bw_gbps: r.maxBw,
    }));
    const partial = options.partial ? { partial: true as const, completed_iterations: this.iterations } : {};
    return {
      benchmark: 'ct-perftest',
      ...partial,
      matrix_file: info.matrixFile,
      ranks: info.ranks,
      backend: info.backend,
      xfer_op: info.xferOp,
      shards: info.shards,
      mem_type: info.memType,
      iterations: info.iterations,
      warmup_iterations: info.warmupIterations,
      verified_buffers: info.verifiedBuffers,
      total_latency_s: totalS,
      avg_latency_per_iter_s: this.iterations > 0 ? totalS / this.iterations : 0,
      avg_iter_latency_ms: avgIterNs / 1e6,
      min_iter_latency_ms: this.iterLatency.minAvgMax.min / 1e6,
      max_iter_latency_ms: this.iterLatency.minAvgMax.max / 1e6,
      total_size_gb: info.bytesPerIteration / 1e9,
      bytes_per_iteration: info.bytesPerIteration,
      aggregate_bw_gbps: avgIterNs > 0 ? info.bytesPerIteration / avgIterNs : 0,
      avg_bw_gbps: mean(perRank.map((r) => r.avg_bw_gbps)),
      per_rank: perRank,
      units: { size: 'GB (1e9 bytes)', bandwidth: 'GB/s (1e9 bytes/s)' },
      notes: info.notes ?? [],
    };
  }
}

/** The report of whole runs at once (every timed iteration of every rank). */
export function ctReport(info: CtRunInfo, runs: RankRuns[]): CtReport {
  return new CtAccumulator(info).add(runs).report();
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
