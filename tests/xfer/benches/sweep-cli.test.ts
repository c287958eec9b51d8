// `disagg-bench sweep` run for real on 2 local ranks: nixlbench's banner and table, the
// consistency check catching a flipped byte, the expected-bandwidth check failing the run.
import { describe, expect, it } from 'vitest';
import { extractNixlbenchMetrics } from '../../../framework/metrics/extractors/nixlbench.ts';
import { backendAvailability } from '../../../runners/xfer/backends/registry.ts';
import { runBench } from './bench-cli.ts';

const small = ['--num_iter', '8', '--warmup_iter', '2', '--large_blk_iter_ftr', '2', '--max_block_size', '2M'];

describe('disagg-bench sweep', { concurrent: true }, () => {
  it('prints the banner and one table per op, every byte verified, batch sizes doubling', async () => {
    const r = await runBench(['sweep', '--op_type', 'READ,WRITE', '--check_consistency', '--max_batch_size', '2', ...small]);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toMatch(/^\*{160}\nNIXLBench Configuration\n\*{160}\n/m);
    expect(r.out).toContain(`${'Op type (--op_type=[READ,WRITE])'.padEnd(60)}: READ`);
    expect(r.out).toContain('Consistency check passed: every transferred byte verified in all 40 steps');
    const { metrics, problems } = extractNixlbenchMetrics(r.out);
    expect(problems).toEqual([]);
    const write = metrics.filter((m) => m.name === 'BW_GBPS' && m.labels.op_type === 'WRITE');
    expect(write.map((m) => `${m.labels.block_size}x${m.labels.batch_size}`).slice(0, 4)).toEqual(['4096x1', '4096x2', '8192x1', '8192x2']);
    expect(write).toHaveLength(20);
  });

  it('catches a corrupted byte at the destination and fails, naming the step, rank and offset', async () => {
    const r = await runBench(['sweep', '--check_consistency', '--test_corrupt_rank', '1', '--max_block_size', '8K', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1']);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/Consistency check failed: WRITE block 4096 B batch 1: rank 1: region 'sweep' offset 2048 \(byte 2048 of the stream rank 0 -> rank 1, iteration 0\): expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2}/);
    expect(r.out).toMatch(/Consistency check failed: WRITE block 8192 B batch 1: rank 1/);
  });

  it('READ on 4 ranks pairwise: the initiators verify, aggregate and network-utilisation columns appear', async () => {
    const r = await runBench(['sweep', '--ranks', '4', '--op_type', 'READ', '--check_consistency', '--max_block_size', '16K', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1', '--link_bw', '25']);
    expect(r.exitCode, r.out).toBe(0);
    const { metrics } = extractNixlbenchMetrics(r.out);
    const agg = metrics.filter((m) => m.name === 'AGG_BW_GBPS');
    const util = metrics.filter((m) => m.name === 'NETWORK_UTIL_PCT');
    expect(agg).toHaveLength(3);
    // util = aggregate / (2 pairs x 25 GB/s) x 100, at the table's 6 decimals
    agg.forEach((a, i) => expect(util[i].value).toBeCloseTo((a.value / 50) * 100, 4));
  });

  it('fails with every expected-bandwidth miss listed', async () => {
    const r = await runBench(['sweep', '--max_block_size', '8K', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1', '--expect', '4K:100000,8K:100000,16K:1']);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/Expected bandwidth check failed: block 4096 B batch 1: [\d.]+ GB\/s is [\d.]+% below the expected 100000 GB\/s \(tolerance 10.0%\)/);
    expect(r.out).toMatch(/Expected bandwidth check failed: block 8192 B batch 1:/);
    expect(r.out).toContain('Expected bandwidth check failed: block 16384 B: no measurement');
  });

  it('--pipeline_depth: every slot of every lane verified on ucx, capped with nixlbench\'s warning where a step has fewer iterations', async () => {
    // 1 MiB runs 4 iterations (4 slots per thread); 2 MiB (above 1 MiB) 4 / 2 = 2, so depth 2.
    const args = ['sweep', '--backend', 'ucx', '--check_consistency', '--pipeline_depth', '4', '--num_threads', '2', '--max_batch_size', '2'];
    const r = await runBench([...args, '--start_block_size', '1M', '--max_block_size', '2M', '--num_iter', '8', '--warmup_iter', '0', '--large_blk_iter_ftr', '2']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toContain(`${'Pipeline depth (--pipeline_depth=N)'.padEnd(60)}: 4`);
    expect(r.out).toContain('Consistency check passed: every transferred byte verified in all 4 steps');
    expect(r.out.match(/Warning: pipeline_depth \(4\) exceeds num_iter \(2\), capping to 2/g)).toHaveLength(2); // 2 MiB, batch 1 and 2
    expect(extractNixlbenchMetrics(r.out).problems).toEqual([]);
  });

  it('refuses a block larger than --total_buffer_size with nixlbench\'s message, before any rank starts', async () => {
    const r = await runBench(['sweep', '--max_block_size', '64M', '--total_buffer_size', '32M']);
    expect(r.exitCode).toBe(1);
    expect(r.out).toContain('Incorrect buffer size configuration for Initiator(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)');
    expect(r.out).not.toContain('[rank');
  });

  it("a capped pipeline whose descriptors do not divide fails as nixlbench's execTransferLoop does", async () => {
    // 16 iterations per thread, 2 targets: block > 1 MiB runs 16/16 = 1 iteration, depth 3 capped to 1 divides;
    // --num_iter 32 --large_blk_iter_ftr 16: 2 iterations, 2 x 1 x 3 = 6 descriptors over 2 requests divide;
    // --num_iter 64 --large_blk_iter_ftr 16 --num_threads 1, onetomany over 2 targets, batch 1, depth 5: 4 iterations,
    // 2 x 1 x 5 = 10 descriptors over 4 requests do not
    const r = await runBench(['sweep', '--ranks', '3', '--scheme', 'onetomany', '--pipeline_depth', '5', '--num_iter', '64', '--warmup_iter', '0', '--start_block_size', '2M', '--max_block_size', '2M']);
    expect(r.exitCode).toBe(1);
    expect(r.out).toContain('Error: descriptor count (10) is not evenly divisible by pipeline depth (4)');
  });

  it('--mode MG: one process drives two devices each side, every device pair verified, bandwidth over both', async () => {
    const r = await runBench(['sweep', '--mode', 'MG', '--num_initiator_dev', '2', '--num_target_dev', '2', '--check_consistency', '--test_corrupt_rank', '1', ...small, '--max_block_size', '8K']);
    expect(r.exitCode).toBe(1); // the corrupted byte is found in device 0's region of the target
    expect(r.out).toMatch(/Mode \(--mode=\[SG,MG\]\)\s+: MG/);
    expect(r.out).toMatch(/Consistency check failed: WRITE block 4096 B batch 1: rank 1: region 'sweep-d0' offset 2048/);
    expect(r.out).not.toMatch(/region 'sweep-d1'/);
  });

  it('--reregister_mem on ucx: nixlbench message, every iteration rebuilt and registered, data verified', async () => {
    const r = await runBench(['sweep', '--reregister_mem', '--check_consistency', '--max_block_size', '16K', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toContain('reregister_mem requires per-iteration request creation. Setting recreate_xfer to true.');
    expect(r.out).toMatch(/Backend \(--backend=\[shm,ucx,cuda,nccl\]\)\s+: ucx/);
    expect(r.out).toMatch(/Re-register memory each iteration \(--reregister_mem=\[0,1\]\)\s+: 1/);
    expect(r.out).toMatch(/Recreate xfer each iteration \(--recreate_xfer=\[0,1\]\)\s+: 1/);
    expect(r.out).toContain('Consistency check passed');
  });

  it('--initiator_seg_type VRAM picks a GPU backend, or says why none can run', async (ctx) => {
    if (backendAvailability('cuda').available) ctx.skip(); // the GPU script covers the machine with a GPU
    const r = await runBench(['sweep', '--initiator_seg_type', 'VRAM', '--target_seg_type', 'VRAM', ...small]);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/VRAM segments need a backend that moves GPU memory, and none can run here \(cuda: .+; ucx: .+\)/);
    expect(r.out).not.toContain('shm');
  });
});

