// Long runs keep their results: statistics in constant memory and stack (a million iterations
// through the real CT perftest end with their numbers), and a report written as the run goes,
// marked partial, so a run killed half-way keeps the iterations it did.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { maxOf, mean, minOf, percentile, RunningStats } from '../../runners/common/stats.ts';
import { CtAccumulator, ctReport, type CtReport, type RankRuns } from '../../runners/xfer/benches/ct-report.ts';
import { extractCtPerftestMetrics } from '../../framework/metrics/extractors/ct-perftest.ts';
import { extractSequentialCtPerftestMetrics } from '../../framework/metrics/extractors/sequential-ct-perftest.ts';
import { waitUntil } from '../fixtures/reliability/suite-run.ts';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin/disagg-bench.js');
const dir = mkdtempSync(path.join(tmpdir(), 'long-runs-'));
const write = (name: string, text: string) => {
  writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};

describe('statistics of a million samples', () => {
  const samples = Float64Array.from({ length: 1_000_000 }, (_, i) => ((i * 7919) % 1_000_003) / 7 - 3);

  it('min, max, mean, spread and percentiles, without a stack overflow, equal to a plain loop', () => {
    let [lo, hi, sum] = [Infinity, -Infinity, 0];
    for (const x of samples) [lo, hi, sum] = [Math.min(lo, x), Math.max(hi, x), sum + x];
    expect(minOf(samples)).toBe(lo);
    expect(maxOf(samples)).toBe(hi);
    const stats = new RunningStats().addAll(samples);
    expect(stats.count).toBe(1_000_000);
    expect(stats.mean).toBeCloseTo(sum / 1_000_000, 6);
    expect(mean(samples)).toBeCloseTo(sum / 1_000_000, 6);
    let squares = 0;
    for (const x of samples) squares += (x - sum / 1_000_000) ** 2;
    expect(stats.stddev).toBeCloseTo(Math.sqrt(squares / 1_000_000), 6);
    const sorted = Float64Array.from(samples).sort();
    expect(percentile(samples, 50)).toBe(sorted[499_999]);
    expect(percentile(samples, 99)).toBe(sorted[989_999]);
    expect(minOf([])).toBe(Infinity);
    expect(maxOf([], 0)).toBe(0);
  });

  it('the CT report folded chunk by chunk equals the report of the whole run', () => {
    const runs = (from: number, to: number): RankRuns[] => [0, 1, 2].map((rank) => ({
      rank,
      bytes: rank === 2 ? 0 : 1024 * (rank + 1),
      spans: Array.from({ length: to - from }, (_, k) => [1e6 * (from + k) + rank * 37, 1e6 * (from + k) + 500 + ((from + k) % 13) * 11 + rank] as [number, number]),
    }));
    const info = { matrixFile: 'm', ranks: 3, backend: 'shm', xferOp: 'WRITE', shards: 1, memType: 'cpu', iterations: 1000, warmupIterations: 0, verifiedBuffers: false, bytesPerIteration: 3072 };
    const folded = new CtAccumulator(info);
    for (let from = 0; from < 1000; from += 64) folded.add(runs(from, Math.min(1000, from + 64)));
    const whole = ctReport(info, runs(0, 1000));
    const close = (a: CtReport) => JSON.parse(JSON.stringify(a, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));
    expect(close(folded.report())).toEqual(close(whole));
    expect(whole.per_rank.map((r) => r.rank)).toEqual([0, 1]);
    expect(folded.report({ partial: true })).toMatchObject({ partial: true, completed_iterations: 1000 });
    expect(whole).not.toHaveProperty('partial');
  });
});

describe('long runs of the CT perftest', () => {
  it('1,000,000 iterations of a small matrix end with their numbers', { timeout: 300_000 }, async () => {
    const config = write('million.yaml', `iters: 1000000\nwarmup_iters: 10\ntraffic_pattern:\n  matrix_file: ${write('one.txt', '1K\n')}\n  mem_type: cpu\n`);
    const json = path.join(dir, 'million.json');
    const r = await execa('node', [bin, 'ct-perftest', config, '--backend', 'shm', '--json-output-path', json], { reject: false, all: true, timeout: 280_000 });
    expect(r.exitCode, String(r.all).slice(-2000)).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
    expect(report).toMatchObject({ iterations: 1_000_000, ranks: 1, bytes_per_iteration: 1024 });
    expect(report).not.toHaveProperty('partial');
    for (const field of ['total_latency_s', 'avg_iter_latency_ms', 'min_iter_latency_ms', 'max_iter_latency_ms', 'aggregate_bw_gbps'] as const) {
      expect(Number.isFinite(report[field]) && report[field] > 0, `${field}: ${report[field]}`).toBe(true);
    }
    expect(report.min_iter_latency_ms).toBeLessThanOrEqual(report.avg_iter_latency_ms);
    expect(report.avg_iter_latency_ms).toBeLessThanOrEqual(report.max_iter_latency_ms);
    const extracted = extractCtPerftestMetrics(readFileSync(json, 'utf8'));
    expect(extracted.problems).toEqual([]);
    expect(extracted.metrics.map((m) => m.name)).toContain('AGGREGATE_BW_GBPS');
  });

  it('a run killed half-way leaves its report so far, whole and marked partial', { timeout: 180_000 }, async () => {
    const config = write('endless.yaml', `iters: 100000000\ntraffic_pattern:\n  matrix_file: ${write('two.txt', '0 4K\n4K 0\n')}\n  mem_type: cpu\n`);
    const json = path.join(dir, 'endless.json');
    const child = spawn('node', [bin, 'ct-perftest', config, '--ranks', '2', '--backend', 'shm', '--json-output-path', json], { detached: true, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    let seen: CtReport;
    try {
      // The report of the first chunks, read as a reader would while the run goes on.
      seen = await waitUntil('a partial report', () => {
        if (!existsSync(json)) return undefined;
        const report = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
        return (report.completed_iterations ?? 0) >= 32 ? report : undefined;
      }, 120_000);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
    }
    const kept = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
    expect(kept).toMatchObject({ partial: true, iterations: 100_000_000, ranks: 2 });
    expect(kept.completed_iterations).toBeGreaterThanOrEqual(seen.completed_iterations!);
    expect(kept.per_rank.map((r) => r.rank)).toEqual([0, 1]);
    const extracted = extractCtPerftestMetrics(readFileSync(json, 'utf8'));
    expect(extracted.problems).toEqual([`the report is partial: the run ended after ${kept.completed_iterations} of 100000000 timed iterations`]);
    expect(extracted.metrics.find((m) => m.name === 'AGGREGATE_BW_GBPS')?.value).toBeGreaterThan(0);
  });

  it('the sequential CT perftest writes its report after every workload iteration, marked partial until the end', { timeout: 180_000 }, async () => {
    const matrix = write('seq.txt', '0 4K\n4K 0\n');
    const config = write('seq.yaml', `traffic_patterns:\n  - { matrix_file: ${matrix}, mem_type: cpu, sleep_after_launch_sec: 1 }\n`);
    const json = path.join(dir, 'seq.json');
    const child = spawn('node', [bin, 'sequential-ct-perftest', config, '--ranks', '2', '--isolation-iters', '1', '--workload-iters', '1000', '--json-output-path', json], { detached: true, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await waitUntil('a partial report', () => existsSync(json), 120_000);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
    }
    const text = readFileSync(json, 'utf8');
    const report = JSON.parse(text) as { iterations_results: unknown[]; metadata: { partial: boolean; completed_workload_iters: number } };
    expect(report.metadata).toMatchObject({ partial: true, workload_iters: 1000 });
    expect(report.iterations_results).toHaveLength(report.metadata.completed_workload_iters);
    const extracted = extractSequentialCtPerftestMetrics(text);
    expect(extracted.problems).toEqual([`the report is partial: the run ended after ${report.metadata.completed_workload_iters} of 1000 workload iterations`]);
    expect(extracted.metrics.some((m) => m.name === 'LATENCY_MS')).toBe(true);
  });
});
