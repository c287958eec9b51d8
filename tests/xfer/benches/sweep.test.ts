import { describe, expect, it } from 'vitest';
import { adjustIterations, parseSweepArgs } from '../../../runners/xfer/benches/sweep/sweep-options.ts';
import { bufferBytes, laneRequests, stepAreas, stepDepths, sweepRoles, sweepSteps } from '../../../runners/xfer/benches/sweep/sweep-plan.ts';
import { sweepTableHeader, sweepTableRow } from '../../../runners/xfer/benches/sweep/sweep-table.ts';
import { checkExpectedBandwidth } from '../../../runners/xfer/benches/sweep/sweep-expect.ts';
import { parseNixlbenchTables } from '../../../framework/metrics/extractors/nixlbench.ts';
import { initiatorFigures, postAndTxUs } from '../../../runners/xfer/benches/sweep/sweep-figures.ts';
import { runBench } from './bench-cli.ts';
import { nixlbenchBufferError, pipelineDescriptorError } from '../../../runners/xfer/benches/sweep/sweep-buffer-rules.ts';

describe('sweep options (nixlbench names and defaults)', () => {
  it("has nixlbench's defaults", () => {
    expect(parseSweepArgs([])).toMatchObject({
      backend: 'shm',
      initiatorSegType: 'DRAM',
      targetSegType: 'DRAM',
      scheme: 'pairwise',
      opTypes: ['WRITE'],
      checkConsistency: false,
      totalBufferSize: 8 * 1024 ** 3,
      startBlockSize: 4096,
      maxBlockSize: 64 * 1024 ** 2,
      startBatchSize: 1,
      maxBatchSize: 1,
      numIter: 1000,
      warmupIter: 100,
      largeBlkIterFtr: 16,
      numThreads: 1,
      tolerance: 0.1,
      linkBw: 50,
    });
  });

  it('takes gflags forms, units, op lists and expectations', () => {
    const o = parseSweepArgs(['--check_consistency=true', '--op_type', 'READ,WRITE', '--max_block_size=64M', '--expect', '64M:46.48,4096:0.08', '--etcd_endpoints', 'http://x:2379']);
    expect(o).toMatchObject({ checkConsistency: true, opTypes: ['READ', 'WRITE'], maxBlockSize: 67108864 });
    expect(o.expect).toEqual([{ blockSize: 67108864, gbps: 46.48 }, { blockSize: 4096, gbps: 0.08 }]);
    expect(o.nixlbench.runtime).toMatchObject({ type: 'ETCD', etcdEndpoints: 'http://x:2379', given: ['etcd_endpoints'] });
    expect(parseSweepArgs(['--nocheck_consistency']).checkConsistency).toBe(false);
    expect(parseSweepArgs(['--backend', 'LIBFABRIC']).backend).toBe('libfabric'); // nixlbench's name
    expect(() => parseSweepArgs(['--backend', 'GDS'])).toThrow(/--backend must be one of shm, ucx, cuda, nccl, libfabric.*, got 'GDS'/);
    expect(parseSweepArgs(['--mode', 'MG']).nixlbench.mode).toBe('MG');
    expect(() => parseSweepArgs(['--start_block_size', '1M', '--max_block_size', '4K'])).toThrow(/must be between 1 and --max_block_size/);
    expect(() => parseSweepArgs(['--expect', '4096'])).toThrow(/BLOCK_SIZE:GBPS/);
  });

  it('rounds iterations up as nixlbench does, with its warning', () => {
    const o = parseSweepArgs(['--num_iter', '20', '--warmup_iter', '5', '--num_threads', '2', '--large_blk_iter_ftr', '4']);
    expect(adjustIterations(o)).toEqual([
      'WARNING: Adjusting num_iter to 24 to allow equal distribution to 2 threads',
      'WARNING: Adjusting warmup_iter to 8 to allow equal distribution to 2 threads',
    ]);
    expect([o.numIter, o.warmupIter]).toEqual([24, 8]);
  });
});

describe('sweep plan', () => {
  it('splits ranks and pairs them per scheme', () => {
    const links = (world: number, scheme: 'pairwise' | 'manytoone' | 'onetomany' | 'tp', i?: number, t?: number) =>
      sweepRoles(world, scheme, i, t).pairs.map((p) => `${p.initiator}>${p.target}`);
    expect(links(2, 'pairwise')).toEqual(['0>1']);
    expect(links(4, 'pairwise')).toEqual(['0>2', '1>3']);
    expect(links(4, 'manytoone')).toEqual(['0>3', '1>3', '2>3']);
    expect(links(4, 'onetomany')).toEqual(['0>1', '0>2', '0>3']);
    expect(links(6, 'tp', 2, 4)).toEqual(['0>2', '0>3', '1>4', '1>5']);
    expect(links(6, 'tp', 4, 2)).toEqual(['0>4', '1>4', '2>5', '3>5']);
    expect(() => sweepRoles(3, 'pairwise')).toThrow(/cannot split/);
    expect(() => sweepRoles(1, 'pairwise')).toThrow(/at least 2 ranks/);
    expect(() => sweepRoles(5, 'tp', 2, 3)).toThrow(/multiple of the initiators/);
  });

  it('walks block sizes (outer) and batch sizes (inner), doubling, fewer iterations above 1 MiB', () => {
    const o = parseSweepArgs(['--start_block_size', '512K', '--max_block_size', '2M', '--max_batch_size', '2', '--num_iter', '64', '--warmup_iter', '16']);
    expect(sweepSteps(o).map((s) => [s.blockSize, s.batchSize, s.iterations, s.warmup])).toEqual([
      [524288, 1, 64, 16],
      [524288, 2, 64, 16],
      [1048576, 1, 64, 16], // 1 MiB is not above 1 MiB
      [1048576, 2, 64, 16],
      [2097152, 1, 4, 1],
      [2097152, 2, 4, 1],
    ]);
  });

  it('gives every (pair, thread) its own area and blocks their own offsets', () => {
    const o = parseSweepArgs(['--max_block_size', '8K', '--max_batch_size', '4', '--num_threads', '2']);
    const roles = sweepRoles(4, 'onetomany');
    expect(bufferBytes(roles, 0, o)).toBe(3 * 2 * 8192 * 4); // 3 targets x 2 threads x max block x max batch
    expect(bufferBytes(roles, 2, o)).toBe(2 * 8192 * 4);
    const step = { blockSize: 4096, batchSize: 2, iterations: 10, warmup: 0 };
    const lane1 = laneRequests(roles.pairs, 0, 'READ', step, 1, o);
    expect(lane1.map((r) => [r.peer, r.localOffset, r.remoteOffset, r.length, r.op])).toEqual([
      [1, 32768, 32768, 4096, 'READ'],
      [1, 36864, 36864, 4096, 'READ'],
      [2, 65536 + 32768, 32768, 4096, 'READ'],
      [2, 65536 + 36864, 36864, 4096, 'READ'],
      [3, 131072 + 32768, 32768, 4096, 'READ'],
      [3, 131072 + 36864, 36864, 4096, 'READ'],
    ]);
    // READ: data flows from the target into the initiator's buffer
    expect(stepAreas(roles.pairs, 2, 'READ', step, o)).toEqual([
      { region: 'sweep', stream: 0, offset: 0, length: 8192, source: 2, destination: 0, lane: 0 },
      { region: 'sweep', stream: 1, offset: 32768, length: 8192, source: 2, destination: 0, lane: 1 },
    ]);
  });
});

describe('sweep --pipeline_depth (nixlbench: batch x depth blocks per thread, depth requests in flight)', () => {
  it('gives each slot of a lane its own batch of blocks, and the buffer room for all of them', () => {
    const o = parseSweepArgs(['--max_block_size', '8K', '--max_batch_size', '2', '--pipeline_depth', '3']);
    expect(o.pipelineDepth).toBe(3);
    expect(parseSweepArgs([]).pipelineDepth).toBe(1);
    expect(() => parseSweepArgs(['--pipeline_depth', '0'])).toThrow("--pipeline_depth 0: pipeline_depth must be >= 1 (nixlbench's check)");
    const roles = sweepRoles(2, 'pairwise');
    expect(bufferBytes(roles, 0, o)).toBe(8192 * 2 * 3);
    const step = { blockSize: 4096, batchSize: 2, iterations: 10, warmup: 2 };
    const offsets = [0, 1, 2].map((slot) => laneRequests(roles.pairs, 0, 'WRITE', step, 0, o, slot).map((r) => r.remoteOffset));
    expect(offsets).toEqual([[0, 4096], [8192, 12288], [16384, 20480]]);
    expect(stepAreas(roles.pairs, 1, 'WRITE', step, o, 3)).toEqual([{ region: 'sweep', stream: 0, offset: 0, length: 4096 * 2 * 3, source: 0, destination: 1, lane: 0 }]);
  });

  it("caps the depth at a loop's iterations per thread, with nixlbench's warning", () => {
    const o = parseSweepArgs(['--pipeline_depth', '8', '--num_threads', '2']);
    expect(stepDepths({ blockSize: 4096, batchSize: 1, iterations: 64, warmup: 8 }, o)).toEqual({
      laneWarmup: 4,
      laneIterations: 32,
      warmup: 4,
      timed: 8,
      slots: 8,
      warnings: ['Warning: pipeline_depth (8) exceeds num_iter (4), capping to 4'],
    });
    expect(stepDepths({ blockSize: 4096, batchSize: 1, iterations: 64, warmup: 0 }, o).warnings).toEqual([]);
  });
});

describe('sweep table (nixlbench current format)', () => {
  const row = { blockSize: 4096, batchSize: 1, bwGbps: 0.0812345678, avgLatUs: 49.21, avgPrepUs: 12.4, p99PrepUs: 30.1, avgPostUs: 3.2, p99PostUs: 6.9, avgTxUs: 47.7, p99TxUs: 59.5 };

  it('pads columns to nixlbench widths: 6 decimals for bandwidth, 1 for times', () => {
    expect(sweepTableHeader(false).split('\n')[0]).toBe(
      'Block Size (B)      Batch Size     B/W (GB/Sec)   Avg Lat. (us)  Avg Prep (us)  P99 Prep (us)  Avg Post (us)  P99 Post (us)  Avg Tx (us)    P99 Tx (us)    ',
    );
    expect(sweepTableHeader(false).split('\n')[1]).toBe('-'.repeat(160));
    expect(sweepTableRow(row, false)).toBe(
      '4096                1              0.081235       49.2           12.4           30.1           3.2            6.9            47.7           59.5           ',
    );
    expect(sweepTableRow({ ...row, aggregateGbps: 0.16, networkUtilPct: 0.16 }, true)).toContain('0.081235       0.160000                 0.160000            49.2');
  });

  it('is what the nixlbench parser reads', () => {
    const text = [sweepTableHeader(true), sweepTableRow({ ...row, aggregateGbps: 0.16, networkUtilPct: 0.16 }, true)].join('\n');
    const { tables, problems } = parseNixlbenchTables(text);
    expect(problems).toEqual([]);
    expect(tables[0].rows).toEqual([[4096, 1, 0.081235, 0.16, 0.16, 49.2, 12.4, 30.1, 3.2, 6.9, 47.7, 59.5]]);
  });
});

describe('expected bandwidth (within 10% of 46.48 GB/s)', () => {
  it('reports every miss at once, above or below, and block sizes with no row', () => {
    const expected = [{ blockSize: 67108864, gbps: 46.48 }, { blockSize: 4096, gbps: 0.08 }, { blockSize: 8192, gbps: 1 }];
    const measured = [
      { blockSize: 67108864, batchSize: 1, gbps: 42.0 }, // 9.6% below: within
      { blockSize: 4096, batchSize: 1, gbps: 0.1 }, // 25% above
      { blockSize: 4096, batchSize: 2, gbps: 0.05, op: 'READ' }, // 37.5% below
    ];
    expect(checkExpectedBandwidth(expected, measured, 0.1)).toEqual([
      'block 4096 B batch 1: 0.100000 GB/s is 25.0% above the expected 0.08 GB/s (tolerance 10.0%)',
      'READ block 4096 B batch 2: 0.050000 GB/s is 37.5% below the expected 0.08 GB/s (tolerance 10.0%)',
      'block 8192 B: no measurement (expected 1 GB/s); is it inside the swept block sizes?',
    ]);
    expect(checkExpectedBandwidth([{ blockSize: 67108864, gbps: 46.48 }], [{ blockSize: 67108864, batchSize: 1, gbps: 41.8 }], 0.1)).toHaveLength(1);
  });
});

describe("nixlbench's definitions of Tx and B/W", () => {
  it('Tx runs from when the post returned to completion; Post is the post call (nixlbench postSlot / execTransferLoop)', () => {
    // posted 4 us after the start, complete 10 us after it: Post 4, Tx 6 (not 10)
    expect(postAndTxUs({ startNs: 1_000, postedNs: 5_000, endNs: 11_000 })).toEqual({ postUs: 4, txUs: 6 });
  });

  it('onetomany and tp count one target as nixlbench printStats does; pairwise MG counts every device', () => {
    const step = { blockSize: 1 << 20, batchSize: 2, laneIterations: 50, numThreads: 2, seconds: 0.5 };
    const perTarget = ((1 << 20) * 2 * 50 * 2) / 1e9 / 0.5;
    for (const scheme of ['onetomany', 'tp'] as const) {
      const f = initiatorFigures({ ...step, scheme, peers: 3 });
      expect(f.bwGbps).toBeCloseTo(perTarget, 12);
      expect(f.avgLatUs).toBeCloseTo((0.5 * 1e6) / (50 * 2), 9);
      expect(f.movedGbps).toBeCloseTo(3 * perTarget, 12);
    }
    const mg = initiatorFigures({ ...step, scheme: 'pairwise', peers: 4 });
    expect(mg.bwGbps).toBeCloseTo(4 * perTarget, 12);
    expect(mg.avgLatUs).toBeCloseTo((0.5 * 1e6) / (50 * 2 * 4), 9);
  });

  it('a onetomany sweep prints the bytes-moved note under its table', async () => {
    const r = await runBench(['sweep', '--ranks', '3', '--backend', 'shm', '--scheme', 'onetomany', '--num_iter', '16', '--warmup_iter', '16', '--start_block_size', '4K', '--max_block_size', '8K']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toContain("Note: scheme onetomany: B/W and Avg Lat. count each iteration's batch once, as nixlbench prints them, although rank 0 sent it to each of its 2 targets: the bytes moved are 2 x B/W");
  });
});

describe("nixlbench's buffer-size rules, its cases and its words", () => {
  const base = { totalBufferSize: 8 * 1024 ** 3, maxBlockSize: 64 * 1024 ** 2, maxBatchSize: 1, numThreads: 1 };
  it('accepts what nixlbench accepts: a deep pipeline wraps in nixlbench, here it gets its own bytes', () => {
    expect(nixlbenchBufferError({ ...base, totalBufferSize: 256 * 1024 ** 2 })).toBeUndefined();
    expect(parseSweepArgs(['--max_block_size', '64M', '--total_buffer_size', '256M', '--pipeline_depth', '8']).pipelineDepth).toBe(8);
    expect(parseSweepArgs(['--max_block_size', '1M', '--max_batch_size', '8', '--total_buffer_size', '8M']).maxBatchSize).toBe(8);
  });

  it('refuses what nixlbench refuses, in its order and words', () => {
    expect(nixlbenchBufferError({ ...base, totalBufferSize: 32 * 1024 ** 2 })).toBe(
      'Incorrect buffer size configuration for Initiator(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)',
    );
    expect(nixlbenchBufferError({ ...base, totalBufferSize: 128 * 1024 ** 2, numTargetDev: 4 })).toBe(
      'Incorrect buffer size configuration for Target(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)',
    );
    expect(nixlbenchBufferError({ ...base, totalBufferSize: 100 * 1024 ** 2, numThreads: 2 })).toBe(
      'Incorrect buffer size configuration (max_block_size * max_batch_size) (67108864) is > (total_buffer_size / num_threads) (52428800)',
    );
    expect(nixlbenchBufferError({ ...base, maxBlockSize: 4096, totalBufferSize: 1_000_000, numThreads: 3 })).toBe(
      'Total_buffer_size must be divisible by the product of num_threads and num_initiator_dev, next such value is 1000002',
    );
    expect(nixlbenchBufferError({ ...base, maxBlockSize: 4096, totalBufferSize: 1_000_002, numThreads: 3, numTargetDev: 4 })).toBe(
      'Total_buffer_size must be divisible by the product of num_threads and num_target_dev, next such value is 1000008',
    );
    expect(() => parseSweepArgs(['--total_buffer_size', '1000000', '--num_threads', '3', '--max_block_size', '4K'])).toThrow(/next such value is 1000002 \(nixlbench's check\)/);
  });

  it("a capped pipeline's descriptors must divide among its requests (nixlbench's execTransferLoop)", () => {
    expect(pipelineDescriptorError(1, 2, 4, 2)).toBeUndefined();
    expect(pipelineDescriptorError(2, 1, 5, 4)).toBe('Error: descriptor count (10) is not evenly divisible by pipeline depth (4)');
  });
});
