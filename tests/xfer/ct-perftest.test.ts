// `disagg-bench ct-perftest` through the CLI, ranks started by --ranks: kvbench's example matrix on
// shm with READ and WRITE, every receive buffer verified from every sender; the JSON report; and
// the failures (a matrix that does not fit the ranks fails before any rank starts, a memory type
// the backend cannot move fails naming the rank).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { CtReport } from '../../runners/xfer/benches/ct-report.ts';
import { parseCtArgs } from '../../runners/xfer/benches/ct-options.ts';
import { resolveMatrixFile } from '../../runners/xfer/benches/matrix-file.ts';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin/disagg-bench.js');
const dir = mkdtempSync(path.join(tmpdir(), 'ct-perftest-'));
writeFileSync(path.join(dir, 'seed.txt'), '0 0 1M 1M\n0 0 1M 1M\n0 0 0 5K\n0 0 0 5K\n');

function config(name: string, pattern: Record<string, string | number>): string {
  const file = path.join(dir, `${name}.yaml`);
  const lines = Object.entries(pattern).map(([k, v]) => `  ${k}: ${v}`);
  writeFileSync(file, ['iters: 4', 'warmup_iters: 1', 'traffic_pattern:', '  matrix_file: seed.txt', ...lines, ''].join('\n'));
  return file;
}

async function ct(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const r = await execa('node', [bin, 'ct-perftest', ...args], { reject: false, all: true, env: { XFER_TIMEOUT_S: '60', ...env }, timeout: 90_000, cwd });
  return { code: r.exitCode, out: String(r.all ?? ''), stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}

const MiB = 1024 * 1024;

describe('ct-perftest CLI, seed example, 4 ranks', () => {
  it('WRITE on shm: the senders push their rows, every receive slice verified', async () => {
    const json = path.join(dir, 'write.json');
    const r = await ct([config('write', { mem_type: 'cpu', xfer_op: 'WRITE', shards: 3 }), '--ranks', '4', '--backend', 'shm', '--verify-buffers', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    expect(r.stdout).toMatch(/^CT perftest: .*seed\.txt, 4 ranks, backend shm, WRITE, 3 shard\(s\), mem_type cpu, 4 iteration\(s\) after 1 warm-up, every receive buffer verified/);
    expect(r.stdout).not.toContain('[rank'); // rank 0's report alone, unprefixed
    const report = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
    expect(report).toMatchObject({ ranks: 4, iterations: 4, warmup_iterations: 1, verified_buffers: true, bytes_per_iteration: 4 * MiB + 10240, total_size_gb: (4 * MiB + 10240) / 1e9 });
    expect(report.per_rank.map((x) => [x.rank, x.bytes_per_iteration])).toEqual([[0, 2 * MiB], [1, 2 * MiB], [2, 5120], [3, 5120]]);
    for (const x of report.per_rank) expect(x.min_bw_gbps).toBeLessThanOrEqual(x.max_bw_gbps);
    expect(report.total_latency_s).toBeGreaterThan(0);
  });

  it('READ on shm: the receivers pull their columns from every sender, verified', async () => {
    const json = path.join(dir, 'read.json');
    const r = await ct([config('read', { mem_type: 'dram', xfer_op: 'READ' }), '--ranks', '4', '--backend', 'shm', '--verify-buffers', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
    expect(report.xfer_op).toBe('READ');
    // Ranks 2 and 3 initiate: rank 2 pulls 1 MiB from ranks 0 and 1; rank 3 also 5 KiB from 2 and 3.
    expect(report.per_rank.map((x) => [x.rank, x.bytes_per_iteration])).toEqual([[2, 2 * MiB], [3, 2 * MiB + 10240]]);
  });

  it('WRITE on ucx, verified', async () => {
    const json = path.join(dir, 'ucx.json');
    const r = await ct([config('ucx', { mem_type: 'cpu' }), '--ranks', '4', '--backend', 'ucx', '--verify-buffers', '--json-output-path', json], { UCX_NET_DEVICES: 'lo' });
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ backend: 'ucx', verified_buffers: true });
  });
});

describe('ct-perftest CLI failures', () => {
  it('a matrix that does not fit --ranks fails before any rank starts, naming config and matrix', async () => {
    const r = await ct([config('three', { mem_type: 'cpu' }), '--ranks', '3']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/three\.yaml:4:3 traffic_pattern\.matrix_file: .*seed\.txt: the matrix is 4 x 4 but the run has 3 ranks/);
    expect(r.out).not.toContain('[rank');
  });

  it('a 100000G cell: refused before anything is allocated, saying what the node can give (not the OOM killer)', async () => {
    writeFileSync(path.join(dir, 'huge.txt'), '0 100000G\n0 0\n');
    const file = path.join(dir, 'huge.yaml');
    writeFileSync(file, 'iters: 2\nwarmup_iters: 1\ntraffic_pattern:\n  matrix_file: huge.txt\n  mem_type: cpu\n');
    const r = await ct([file, '--ranks', '2', '--backend', 'shm']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/rank 0\] disagg-bench ct-perftest: the CT perftest needs host memory for the send and receive buffers of the 2 rank\(s\) on this node \(the largest rank: 97\.66 TiB\) = 195\.31 TiB, more than the [\d.]+ [KMGT]?i?B this node can give/);
    expect(r.out).not.toMatch(/mmap|ENOMEM|Killed|out of memory/i);
  });

  it('GPU memory on shm fails in the rank, saying why', async () => {
    const r = await ct([config('gpu', { mem_type: 'vram' }), '--ranks', '4', '--backend', 'shm']);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/rank \d: backend shm moves host memory, the patterns need gpu memory/);
  });

  it('usage errors', async () => {
    expect((await ct([])).out).toMatch(/expected one CONFIG file, got 0/);
    expect((await ct([config('x', { mem_type: 'cpu' }), '--backend', 'tcp'])).out).toMatch(/--backend must be one of shm, ucx, cuda, nccl, libfabric, got 'tcp'/);
  });
});

describe("ct-perftest with kvbench's inputs and flags", () => {
  it('a relative matrix_file: the config folder first, then the working directory (kvbench), and the run says which', () => {
    const base = path.join(dir, 'bases');
    mkdirSync(path.join(base, 'cfg'), { recursive: true });
    mkdirSync(path.join(base, 'cwd'), { recursive: true });
    writeFileSync(path.join(base, 'cwd', 'only-cwd.txt'), '0 1\n1 0\n');
    writeFileSync(path.join(base, 'cfg', 'both.txt'), '0 1\n1 0\n');
    writeFileSync(path.join(base, 'cwd', 'both.txt'), '0 2\n2 0\n');
    const cfg = path.join(base, 'cfg');
    const cwd = path.join(base, 'cwd');
    expect(resolveMatrixFile(cfg, 'only-cwd.txt', cwd)).toEqual({ file: path.join(cwd, 'only-cwd.txt'), base: 'working directory' });
    // two different files of that name are refused, naming both
    expect(() => resolveMatrixFile(cfg, 'both.txt', cwd)).toThrow(
      `matrix file both.txt is ambiguous: ${path.join(cfg, 'both.txt')} (relative to the config's folder) and ${path.join(cwd, 'both.txt')} (relative to the working directory, where kvbench looks) are different files; name one with an absolute path, or remove the other`,
    );
    // the same bytes in both places: no question which to read
    writeFileSync(path.join(base, 'cfg', 'same.txt'), '0 3\n3 0\n');
    writeFileSync(path.join(base, 'cwd', 'same.txt'), '0 3\n3 0\n');
    expect(resolveMatrixFile(cfg, 'same.txt', cwd)).toEqual({ file: path.join(cfg, 'same.txt'), base: 'config folder', identical: path.join(cwd, 'same.txt') });
    // equal size, one byte different: still two files
    writeFileSync(path.join(base, 'cwd', 'same.txt'), '0 4\n3 0\n');
    expect(() => resolveMatrixFile(cfg, 'same.txt', cwd)).toThrow(/matrix file same.txt is ambiguous/);
    expect(resolveMatrixFile(cfg, 'both.txt', cfg)).toEqual({ file: path.join(cfg, 'both.txt'), base: 'config folder' }); // one place
    expect(() => resolveMatrixFile(cfg, 'none.txt', cwd)).toThrow(
      `matrix file none.txt not found: neither ${path.join(cfg, 'none.txt')} (relative to the config's folder) nor ${path.join(cwd, 'none.txt')} (relative to the working directory, where kvbench looks) exists`,
    );
  });

  it('the CLI refuses an ambiguous matrix_file at its place in the config, before any rank starts', async () => {
    const base = path.join(dir, 'ambiguous');
    mkdirSync(path.join(base, 'cfg'), { recursive: true });
    mkdirSync(path.join(base, 'cwd'), { recursive: true });
    writeFileSync(path.join(base, 'cfg', 'm.txt'), '0 1K\n1K 0\n');
    writeFileSync(path.join(base, 'cwd', 'm.txt'), '0 2K\n2K 0\n');
    const cfg = path.join(base, 'cfg', 'c.yaml');
    writeFileSync(cfg, 'traffic_pattern:\n  matrix_file: m.txt\n  mem_type: cpu\n');
    const r = await ct([cfg, '--ranks', '2', '--backend', 'shm'], {}, path.join(base, 'cwd'));
    expect(r.code).toBe(1);
    expect(r.out).toContain(`c.yaml:2:3 traffic_pattern.matrix_file: matrix file m.txt is ambiguous: ${path.join(base, 'cfg', 'm.txt')}`);
    expect(r.out).not.toContain('[rank');
  });

  it("sleep_*_launch_sec and metadata in a CT config are taken as kvbench's ct-perftest takes them (not applied), and the run says so", async () => {
    const cfg = path.join(dir, 'sleepy.yaml');
    writeFileSync(cfg, 'iters: 2\ntraffic_pattern:\n  matrix_file: seed.txt\n  mem_type: cpu\n  sleep_before_launch_sec: 30\n  sleep_after_launch_sec: 30\n  metadata: { isl: 1000 }\n');
    const json = path.join(dir, 'sleepy.json');
    const r = await ct([cfg, '--ranks', '4', '--backend', 'shm', '--json-output-path', json]);
    expect(r.code, r.out).toBe(0);
    const notes = ['sleep_before_launch_sec', 'sleep_after_launch_sec', 'metadata'].map(
      (key) =>
        `${key} is not applied by ct-perftest, which runs its iterations back to back as kvbench's ct-perftest does (it reads only matrix_file, shards, mem_type and xfer_op of a traffic_pattern); it is the sequential test's`,
    );
    for (const note of notes) expect(r.stderr).toContain(note);
    expect(r.stderr).toMatch(/note: .*sleepy\.yaml:5:3 traffic_pattern\.sleep_before_launch_sec: sleep_before_launch_sec is not applied/);
    const report = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
    expect(report.notes.filter((n) => n.includes('is not applied by ct-perftest'))).toHaveLength(3);
  });

  it("kvbench's flag pairs: off by default, the last of --x / --no-x wins", () => {
    const flags = (...words: string[]) => {
      const { verifyBuffers, printRecvBuffers } = parseCtArgs(['c.yaml', ...words], 'usage').common;
      return [verifyBuffers, printRecvBuffers];
    };
    expect(flags()).toEqual([false, false]);
    expect(flags('--verify-buffers', '--no-verify-buffers', '--print-recv-buffers')).toEqual([false, true]);
    expect(flags('--no-verify-buffers', '--verify-buffers', '--print-recv-buffers', '--no-print-recv-buffers')).toEqual([true, false]);
  });

  it("an upstream run: matrix in the working directory with decimal cells, --no-verify-buffers --verify-buffers --print-recv-buffers", async () => {
    const cwd = path.join(dir, 'upstream-cwd');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(path.join(cwd, 'up.txt'), '0 1.5K\n0.3K 0\n');
    const cfgDir = path.join(dir, 'upstream-cfg');
    mkdirSync(cfgDir, { recursive: true });
    const cfg = path.join(cfgDir, 'c.yaml');
    writeFileSync(cfg, 'iters: 2\ntraffic_pattern:\n  matrix_file: up.txt\n  mem_type: cpu\n');
    const json = path.join(dir, 'upstream.json');
    const r = await ct([cfg, '--ranks', '2', '--backend', 'shm', '--no-verify-buffers', '--verify-buffers', '--print-recv-buffers', '--json-output-path', json], {}, cwd);
    expect(r.code, r.out).toBe(0);
    const notes = [
      `matrix_file up.txt: read ${path.join(cwd, 'up.txt')}, relative to the working directory (as kvbench resolves it; the config's folder has no such file)`,
      `${path.join(cwd, 'up.txt')}: 1 cell(s) are not whole bytes (the first: '0.3K' at row 1, column 0 = 307.2 bytes); truncated to whole bytes as kvbench does (int()), 0.2 byte(s) dropped in all`,
    ];
    for (const note of notes) expect(r.stderr.split(`note: ${note}`)).toHaveLength(2); // once
    const report = JSON.parse(readFileSync(json, 'utf8')) as CtReport;
    expect(report).toMatchObject({ verified_buffers: true, bytes_per_iteration: 1536 + 307, notes });
    // Each rank prints what it received, after the run: rank 1 got 1536 bytes from rank 0, rank 0 got 307 from rank 1.
    expect(r.stdout).toMatch(/^Recv buffer 1 \(pattern 0, 307 bytes from rank 1 to rank 0\): ([0-9a-f]{2} ){8}\.\.\.( [0-9a-f]{2}){8}$/m);
    expect(r.stdout).toMatch(/^\[rank 1\] Recv buffer 0 \(pattern 0, 1536 bytes from rank 0 to rank 1\): /m);
    expect(r.stdout).toMatch(/Performance metrics:\n {2}Iters {4}Total time \(s\) {4}Avg latency\/iter \(s\) {4}Total size \(GB\) {2}/);
  });
});
