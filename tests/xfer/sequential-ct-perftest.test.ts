// `disagg-bench sequential-ct-perftest` and `disagg-bench matgen` through the CLI: a sequence of
// WRITE and READ patterns verified on shm; kvbench's pacing by default (no sleep before a pattern,
// each pattern's barrier among its senders only), the sleep before a launch with
// --sleep-before-launch (scaled); the reference's JSON layout; a llama-405b matgen workload whose matrices match the KV formula,
// run as is by the sequential test with the compute sleeps scaled down.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { colSum, readMatrix, rowSum } from '../../runners/xfer/matrix.ts';
import { kvBytesPerToken, MODEL_PRESETS, prefillSeconds } from '../../runners/xfer/matgen.ts';
import type { SequentialReport } from '../../runners/xfer/benches/sequential-report.ts';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin/disagg-bench.js');
const dir = mkdtempSync(path.join(tmpdir(), 'sequential-ct-'));
const write = (name: string, text: string) => {
  writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};

async function cli(command: string, args: string[], env: Record<string, string> = {}) {
  const r = await execa('node', [bin, command, ...args], { reject: false, all: true, env: { XFER_TIMEOUT_S: '60', ...env }, timeout: 120_000 });
  return { code: r.exitCode, out: String(r.all ?? ''), stdout: String(r.stdout ?? '') };
}

write('one.txt', '0 64K\n0 0\n');

const readReport = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as SequentialReport;

describe('sequential-ct-perftest CLI', () => {
  it('WRITE, READ with shards and an all-to-all on 4 ranks, verified, in the reference layout', async () => {
    write('a.txt', '0 0 1M 1M\n0 0 1M 1M\n0 0 0 0\n0 0 0 0\n');
    write('b.txt', '0 0 768K 1.5M\n0 0 0 0\n0 0 0 0\n0 0 0 0\n');
    write('c.txt', '0 70001 3 123457\n99991 0 65536 17\n1 262147 0 4099\n8191 5 131071 0\n');
    const config = write('seq.yaml', [
      'traffic_patterns:',
      '  - { matrix_file: a.txt, mem_type: cpu, sleep_before_launch_sec: 2, metadata: { isl: 4000 } }',
      '  - { matrix_file: b.txt, mem_type: cpu, xfer_op: READ, shards: 3, sleep_after_launch_sec: 1 }',
      '  - { matrix_file: c.txt, mem_type: cpu }',
    ].join('\n'));
    const json = path.join(dir, 'seq.json');
    const r = await cli('sequential-ct-perftest', [config, '--ranks', '4', '--backend', 'shm', '--verify-buffers', '--print-recv-buffers', '--sleep-scale', '0.001', '--sleep-before-launch',
      '--warmup-iters', '1', '--isolation-iters', '4', '--workload-iters', '2', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    // kvbench's --print-recv-buffers: every receive slice after every workload iteration (rank 2 gets 1 MiB from 0 and 1 in pattern 0).
    expect(r.stdout).toMatch(/^\[rank 2\] \[iteration 2\] Recv buffer 1 \(pattern 0, 1048576 bytes from rank 1 to rank 2\): /m);
    expect(r.stdout).toMatch(/Iteration 1\/2\n +Transfer size \(GB\) +Latency \(ms\) +Isolated Latency \(ms\) +Num Senders +Mean BW \(GB\/s\)\n/);
    expect(r.stdout).toMatch(/\n +0\.004 +\d+\.\d{3} +\d+\.\d{3} +2 +\d+\.\d{3}\n/);
    const report = readReport(json);
    expect(report.iterations_results).toHaveLength(2);
    // kvbench's sol_calculation_ts: the isolated phase starts after preparation, before the workload.
    expect(report.metadata.sol_calculation_ts).toBeGreaterThanOrEqual(report.metadata.ts + report.metadata.prepare_tp_time);
    expect(report.metadata.sol_calculation_ts).toBeLessThan(report.metadata.iters[0].start_ts);
    for (const iteration of report.iterations_results) {
      expect(iteration.map((x) => x.num_senders)).toEqual([2, 1, 4]);
      expect(iteration.map((x) => x.size)).toEqual([4 * 1048576 / 1e9, (786432 + 1572864) / 1e9, 764519 / 1e9]);
      for (const x of iteration) {
        expect(x.latency).toBeGreaterThan(0);
        expect(x.isolated_latency).toBeGreaterThan(0);
        expect(x.mean_bw).toBeGreaterThan(0);
        expect(x.max_end_ts).toBeGreaterThanOrEqual(x.min_start_ts);
      }
    }
    expect(report.metadata).toMatchObject({ backend: 'shm', ranks: 4, sleep_scale: 0.001, verified_buffers: true, isolation_iters: 4 });
    expect(report.metadata.iters.map((it) => it.tps_start_ts.length)).toEqual([3, 3]);
    expect(report.metadata.patterns[1]).toMatchObject({ xfer_op: 'READ', shards: 3, sleep_after_launch_sec: 1 });
    expect(report.metadata.patterns[0].metadata).toEqual({ isl: 4000 });
    expect(report.metadata.finished_ts).toBeGreaterThan(report.metadata.ts);
  });

  it('applies sleep_after_launch_sec and, with --sleep-before-launch, sleep_before_launch_sec, scaled', async () => {
    const config = write('sleeps.yaml', [
      'traffic_patterns:',
      '  - { matrix_file: one.txt, mem_type: cpu, sleep_after_launch_sec: 0.8 }',
      '  - { matrix_file: one.txt, mem_type: cpu, sleep_before_launch_sec: 1.2 }',
    ].join('\n'));
    const json = path.join(dir, 'sleeps.json');
    const r = await cli('sequential-ct-perftest', [config, '--ranks', '2', '--sleep-scale', '0.25', '--sleep-before-launch', '--warmup-iters', '0', '--isolation-iters', '1', '--workload-iters', '2', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    for (const it of readReport(json).metadata.iters) {
      // Rank 0 sleeps 0.8 * 0.25 s after pattern 0 and 1.2 * 0.25 s before pattern 1 (a lower bound:
      // timers never fire early by more than their millisecond rounding).
      expect(it.tps_start_ts[1] - it.tps_end_ts[0]).toBeGreaterThanOrEqual(0.5 - 0.003);
    }
  });

  it('a compute sleep longer than the wait limit (XFER_TIMEOUT_S) does not time out the ranks waiting for it', async () => {
    // The wait limit leaves room for the two ranks starting a few seconds apart on a loaded machine;
    // the sleep is longer than it.
    const config = write('long-sleep.yaml', 'traffic_patterns:\n  - { matrix_file: one.txt, mem_type: cpu, sleep_before_launch_sec: 12 }\n');
    const r = await cli('sequential-ct-perftest', [config, '--ranks', '2', '--sleep-before-launch', '--warmup-iters', '0', '--isolation-iters', '1', '--workload-iters', '1'], { XFER_TIMEOUT_S: '10' });
    expect(r.code, r.out).toBe(0);
  });

  it('by default sleeps no sleep_before_launch_sec, as kvbench (whose main.py never passes it to a pattern), and says so', async () => {
    // 30 s of compute before the pattern: slept, it would be inside the iteration's time.
    const config = write('kvbench-pacing.yaml', 'traffic_patterns:\n  - { matrix_file: one.txt, mem_type: cpu, sleep_before_launch_sec: 30 }\n');
    const json = path.join(dir, 'kvbench-pacing.json');
    const r = await cli('sequential-ct-perftest', [config, '--ranks', '2', '--warmup-iters', '0', '--isolation-iters', '1', '--workload-iters', '1', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    const note = /sleep_before_launch_sec of 1 pattern\(s\) is not slept: kvbench's sequential-ct-perftest builds its patterns without it and never sleeps before one; --sleep-before-launch/;
    expect(r.out).toMatch(note);
    const report = readReport(json);
    expect(report.metadata.sleep_before_launch).toBe(false);
    expect(report.metadata.notes).toContainEqual(expect.stringMatching(note));
    // The iteration ends with its one transfer: no compute time inside WORKLOAD_LATENCY_MS.
    const it0 = report.metadata.iters[0];
    expect(it0.tps_end_ts[0] - it0.start_ts).toBeLessThan(15);
  });

  it("waits for a pattern's senders only: a receiver still sleeping after its own pattern does not hold the next pattern's sender back", async () => {
    // Pattern 0: rank 2 sends to rank 0, then sleeps 10 s. Pattern 1: rank 0 sends to rank 2.
    // kvbench's barrier of pattern 1 is rank 0 alone, so rank 0 starts it at once; a barrier of
    // senders and receivers would hold it until rank 2 wakes, 10 s after pattern 0 ended.
    write('two-to-zero.txt', '0 0 0\n0 0 0\n64K 0 0\n');
    write('zero-to-two.txt', '0 0 64K\n0 0 0\n0 0 0\n');
    const config = write('senders-barrier.yaml', [
      'traffic_patterns:',
      '  - { matrix_file: two-to-zero.txt, mem_type: cpu, sleep_after_launch_sec: 10 }',
      '  - { matrix_file: zero-to-two.txt, mem_type: cpu }',
    ].join('\n'));
    const json = path.join(dir, 'senders-barrier.json');
    const r = await cli('sequential-ct-perftest', [config, '--ranks', '3', '--verify-buffers', '--warmup-iters', '1', '--isolation-iters', '2', '--workload-iters', '1', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    const { iters } = readReport(json).metadata;
    expect(iters[0].tps_start_ts[1] - iters[0].tps_end_ts[0]).toBeLessThan(5);
  });

  it('refuses shared buffers with verification, and a matrix that does not fit --ranks', async () => {
    expect((await cli('sequential-ct-perftest', [path.join(dir, 'sleeps.yaml'), '--share-buffers', '--verify-buffers'])).out).toMatch(/drop one of --share-buffers, --verify-buffers/);
    const r = await cli('sequential-ct-perftest', [path.join(dir, 'sleeps.yaml'), '--ranks', '3']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/sleeps\.yaml:2:7 traffic_patterns\[0\]\.matrix_file: .*one\.txt: the matrix is 2 x 2 but the run has 3 ranks/);
  });
});

describe('sequential-ct-perftest memory', () => {
  it('patterns whose buffers the node cannot give are refused before anything is allocated; --share-buffers counts the largest pattern only', async () => {
    write('half-t.txt', '0 60000G\n0 0\n');
    const config = write('huge.yaml', ['traffic_patterns:', '  - { matrix_file: half-t.txt, mem_type: cpu }', '  - { matrix_file: half-t.txt, mem_type: cpu }'].join('\n'));
    const r = await cli('sequential-ct-perftest', [config, '--ranks', '2', '--warmup-iters', '0', '--isolation-iters', '1', '--workload-iters', '1']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/the sequential CT perftest \(2 pattern\(s\)\) needs host memory for the send and receive buffers of the 2 rank\(s\) on this node \(the largest rank: 117\.19 TiB\) = 234\.3\d TiB, more than the .* this node can give/);
    const shared = await cli('sequential-ct-perftest', [config, '--ranks', '2', '--share-buffers', '--warmup-iters', '0', '--isolation-iters', '1', '--workload-iters', '1']);
    expect(shared.out).toMatch(/\(2 pattern\(s\), shared buffers\) needs .*\(the largest rank: 58\.59 TiB\) = 117\.19 TiB/);
  });
});

describe('matgen CLI', () => {
  const out = path.join(dir, 'llama');
  const llama = MODEL_PRESETS['llama-405b'];

  it('llama-405b, prefill tp 4 and decode tp 8 on one node each: matrices match the KV formula, run as is', async () => {
    const gen = await cli('matgen', ['--model', 'llama-405b', '--num-prefill-nodes', '1', '--num-decode-nodes', '1', '--prefill-tp', '4', '--decode-tp', '8', '--pair-workers', 'round-robin',
      '--ppn', '8', '--num-user-requests', '3', '--isl-mean', '64', '--isl-scale', '32', '--min-isl', '16', '--max-isl', '256', '--seed', '11',
      '--mem-type', 'cpu', '--results-dir', out]);
    expect(gen.code, gen.out).toBe(0);
    expect(gen.stdout).toMatch(/^matgen: 3 traffic patterns from 3 user requests \(batch size 1\) for 16 ranks/);
    const meta = parse(readFileSync(path.join(out, 'metadata.yaml'), 'utf8')) as { traffic_patterns: { matrix_file: string; mem_type: string; sleep_before_launch_sec: number; metadata: { isl: number } }[] };
    expect(meta.traffic_patterns).toHaveLength(3);
    const perToken = kvBytesPerToken(llama);
    meta.traffic_patterns.forEach((p, b) => {
      expect(p).toMatchObject({ matrix_file: path.join(out, `matrix_${b}.txt`), mem_type: 'cpu' });
      const m = readMatrix(p.matrix_file, 16);
      // Batch b goes to prefill worker b % 2 (ranks 0-3 or 4-7): each of its 4 ranks sends its
      // quarter of the KV cache in equal shares to 8 / 4 = 2 decode ranks; the decode worker is ranks 8-15.
      const share = Math.floor((p.metadata.isl * perToken) / 8);
      const first = (b % 2) * 4;
      for (let i = 0; i < 16; i++) expect(rowSum(m, i)).toBe(i >= first && i < first + 4 ? 2 * share : 0);
      for (let j = 0; j < 16; j++) expect(colSum(m, j)).toBe(j < 8 ? 0 : share);
      expect(p.sleep_before_launch_sec).toBeCloseTo(prefillSeconds([p.metadata.isl], llama, 4, 36e12), 12);
    });

    const json = path.join(dir, 'llama.json');
    const run = await cli('sequential-ct-perftest', [path.join(out, 'metadata.yaml'), '--ranks', '16', '--backend', 'shm', '--verify-buffers',
      '--sleep-scale', '0.001', '--warmup-iters', '1', '--isolation-iters', '2', '--workload-iters', '1', '--json-output-path', json]);
    expect(run.code, run.out).toBe(0);
    const report = readReport(json);
    expect(report.iterations_results[0].map((x) => x.num_senders)).toEqual([4, 4, 4]);
    expect(report.iterations_results[0].map((x) => x.size)).toEqual(meta.traffic_patterns.map((p) => (8 * Math.floor((p.metadata.isl * perToken) / 8)) / 1e9));
    expect(report.metadata.patterns.map((p) => p.sleep_before_launch_sec)).toEqual(meta.traffic_patterns.map((p) => p.sleep_before_launch_sec));
    expect(report.metadata.sleep_scale).toBe(0.001);
  });

  it('says what is wrong with its input', async () => {
    const base = ['--num-prefill-nodes', '1', '--num-decode-nodes', '1', '--results-dir', path.join(dir, 'x')];
    const error = async (args: string[]) => (await cli('matgen', args)).out;
    expect(await error(['--model', 'llama-405b', '--num-decode-nodes', '1', '--results-dir', 'x'])).toMatch(/--num-prefill-nodes is required/);
    expect(await error(['--model', 'llama-7b', ...base])).toMatch(/unknown --model 'llama-7b' \(presets: llama-405b, /);
    expect(await error(['--hidden-size', '4096', '--num-layers', '32', ...base])).toMatch(/missing --num-heads, --num-kv-heads, --dtype-size/);
    expect(await error(['--model', 'llama-405b', '--num-heads', '8', ...base])).toMatch(/--model llama-405b fixes the shape: drop --num-heads/);
    expect(await error(['--model', 'llama-405b', '--decode-pp', '2', ...base])).toMatch(/^disagg-bench matgen: pipeline parallelism must be 1/m);
    // kvbench clips every ISL to --max-isl then: taken, and said
    expect(await error(['--model', 'llama-405b', '--min-isl', '500', '--max-isl', '100', '--num-user-requests', '2', ...base])).toMatch(/^matgen: note: --min-isl 500 is above --max-isl 100: as kvbench clips .*every ISL is 100$/m);
    // kvbench takes a batch size of 0 (every request closes its batch): taken, and said; what click refuses, in click's words
    expect(await error(['--model', 'llama-405b', '--batch-size', '0', '--num-user-requests', '2', ...base])).toMatch(/^matgen: note: --batch-size 0: every request closes its batch/m);
    expect(await error(['--model', 'llama-405b', '--batch-size', 'two', ...base])).toMatch(/Invalid value for '--batch-size': 'two' is not a valid integer\./);
    expect(await error(['--model', 'llama-405b', '--mem-type', 'hbm', ...base])).toMatch(/--mem-type must be one of cuda, vram, cpu, dram, got 'hbm'/);
  });
});
