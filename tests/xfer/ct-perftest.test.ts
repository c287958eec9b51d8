// `disagg-bench ct-perftest` through the CLI, ranks started by --ranks: seed 000's example matrix on
// shm with READ and WRITE, every receive buffer verified from every sender; the JSON report; and
// the failures (a matrix that does not fit the ranks fails before any rank starts, a memory type
// the backend cannot move fails naming the rank).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { CtReport } from '../../runners/xfer/benches/ct-report.ts';

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

async function ct(args: string[], env: Record<string, string> = {}) {
  const r = await execa('node', [bin, 'ct-perftest', ...args], { reject: false, all: true, env: { XFER_TIMEOUT_S: '60', ...env }, timeout: 90_000 });
  return { code: r.exitCode, out: String(r.all ?? ''), stdout: String(r.stdout ?? '') };
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
