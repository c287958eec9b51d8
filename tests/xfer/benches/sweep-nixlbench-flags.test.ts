// nixlbench's flags beyond the sweep's shape: each is honoured as nixlbench
// means it or refused with one sentence. Engine-level checks run a real one-rank engine (shm, ucx
// over tcp) in this process and watch what the backend is asked to do.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { XferEngine } from '../../../runners/xfer/engine.ts';
import { checkPattern, fillPattern, poisonPattern } from '../../../runners/xfer/pattern.ts';
import { rankFromEnv } from '../../../runners/xfer/rank.ts';
import { openStore } from '../../../runners/xfer/store.ts';
import type { UcxBackend, UcxOptions } from '../../../runners/xfer/backends/ucx.ts';
import { adjustIterations, parseSweepArgs } from '../../../runners/xfer/benches/sweep/sweep-options.ts';
import { hugepageRounding } from '../../../runners/xfer/benches/sweep/sweep-buffer-rules.ts';
import { timingColumns } from '../../../runners/xfer/benches/sweep/sweep-figures.ts';
import { nixlbenchPercentile } from '../../../runners/common/stats.ts';
import { chooseSweepBackend, type VramProbe } from '../../../runners/xfer/benches/sweep/sweep-backend.ts';
import { SweepLane } from '../../../runners/xfer/benches/sweep/sweep-lane.ts';
import { laneRequests, mgRoles, rankRegions, stepAreas, sweepSteps } from '../../../runners/xfer/benches/sweep/sweep-plan.ts';
import { deviceOfRank, sweepEngineOptions, sweepNotes } from '../../../runners/xfer/benches/sweep/sweep-setup.ts';
import { sweepRoles } from '../../../runners/xfer/benches/sweep/sweep-plan.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function single(backend: 'shm' | 'ucx', ucx: UcxOptions = {}) {
  const info = rankFromEnv({ XFER_JOB_ID: `sweep-flags-${backend}-${process.pid}-${Math.random()}` });
  const store = await openStore(info, { timeoutMs: 20_000 });
  cleanup.push(() => store.close(0));
  const engine = await XferEngine.create({ backend, rank: info, store, ucx: { tls: 'tcp', ...ucx } });
  cleanup.push(() => engine.destroy());
  return engine;
}

describe('lifecycle flags (recreate_xfer, reregister_mem)', () => {
  it('--reregister_mem implies --recreate_xfer with nixlbench message, and is refused where registration costs nothing', () => {
    const o = parseSweepArgs(['--backend', 'ucx', '--reregister_mem']);
    expect(o.nixlbench).toMatchObject({ reregisterMem: true, recreateXfer: true });
    expect(o.nixlbench.notes).toContain('reregister_mem requires per-iteration request creation. Setting recreate_xfer to true.');
    expect(() => parseSweepArgs(['--backend', 'shm', '--reregister_mem'])).toThrow(/--reregister_mem: the shm backend registers nothing per buffer \(peers map the shared segment\)/);
    expect(() => parseSweepArgs(['--backend', 'cuda', '--reregister_mem'])).toThrow(/the cuda backend registers nothing per buffer/);
    // no --backend: nixlbench's default backend (UCX) is what these flags mean
    expect(parseSweepArgs(['--reregister_mem']).backend).toBe('ucx');
    expect(parseSweepArgs(['--recreate_xfer']).nixlbench).toMatchObject({ recreateXfer: true, reregisterMem: false });
  });

  it('a lane rebuilds the transfer every iteration with --recreate_xfer, and registers its blocks each time with --reregister_mem', async () => {
    const engine = await single('ucx');
    engine.allocate('a', 64 * 1024);
    engine.allocate('b', 64 * 1024);
    await engine.connect();
    const requests = [0, 1].map((i) => ({ op: 'WRITE' as const, peer: 0, local: 'a', localOffset: i * 4096, remote: 'b', remoteOffset: i * 4096, length: 4096 }));
    const register = vi.spyOn(engine.backend, 'register');
    const deregister = vi.spyOn(engine.backend, 'deregister');
    const prepare = vi.spyOn(engine, 'prepare');

    const plain = new SweepLane(engine, requests, undefined, { recreateXfer: false, reregisterMem: false });
    await plain.prepare();
    for (let i = 0; i < 5; i++) await plain.iterate();
    expect([prepare.mock.calls.length, register.mock.calls.length, plain.prepUs.length]).toEqual([1, 0, 1]);

    // a slot not built yet builds itself at its first post, as nixlbench's slots inside the timed loop
    prepare.mockClear();
    const lazy = new SweepLane(engine, requests, undefined, { recreateXfer: false, reregisterMem: false });
    for (let i = 0; i < 5; i++) await lazy.iterate();
    expect([prepare.mock.calls.length, lazy.prepUs.length]).toEqual([1, 1]);

    prepare.mockClear();
    const recreate = new SweepLane(engine, requests, undefined, { recreateXfer: true, reregisterMem: false });
    await recreate.prepare();
    for (let i = 0; i < 5; i++) await recreate.iterate();
    expect([prepare.mock.calls.length, register.mock.calls.length, recreate.prepUs.length]).toEqual([5, 0, 5]);

    prepare.mockClear();
    const reregister = new SweepLane(engine, requests, undefined, { recreateXfer: true, reregisterMem: true });
    await reregister.prepare();
    fillPattern(engine.regions.get('a')!, 0, 8192, { sender: 0, receiver: 0, iteration: 7 });
    poisonPattern(engine.regions.get('b')!, 0, 8192, { sender: 0, receiver: 0, iteration: 7 });
    for (let i = 0; i < 5; i++) await reregister.iterate();
    reregister.release();
    // 5 builds x 2 blocks, each a ucp_mem_map of that block (a view of region 'a'), all released
    expect(prepare.mock.calls.length).toBe(5);
    expect(register.mock.calls.map(([r]) => `${r.name} ${r.size}`)).toEqual(Array(5).fill(['a[0,+4096] 4096', 'a[4096,+4096] 4096']).flat());
    expect(deregister.mock.calls).toHaveLength(10);
    expect(checkPattern(engine.regions.get('b')!, 0, 8192, { sender: 0, receiver: 0, iteration: 7 })).toBeUndefined();
  });
});

describe('--enable_pt (a progress thread)', () => {
  it('is honoured on ucx: a thread of its own progresses the worker and the transfer completes verified', async () => {
    const engine = await single('ucx', { progressThread: true });
    const src = engine.allocate('src', 1 << 20);
    const dst = engine.allocate('dst', 1 << 20);
    await engine.connect();
    const stream = { sender: 0, receiver: 0, iteration: 3 };
    fillPattern(src, 0, 1 << 20, stream);
    poisonPattern(dst, 0, 1 << 20, stream);
    for (let i = 0; i < 4; i++) await engine.transfer([{ op: 'WRITE', peer: 0, local: 'src', localOffset: 0, remote: 'dst', remoteOffset: 0, length: 1 << 20 }]);
    expect(checkPattern(dst, 0, 1 << 20, stream)).toBeUndefined();
    expect((engine.backend as UcxBackend).progressThreadCalls()).toBeGreaterThan(0);
  });

  it("keeps the per-peer choices: a 'peer' endpoint (without the error callback UCX would run on the thread), UCX-allocated regions", async () => {
    const engine = await single('ucx', { progressThread: true, errorHandling: 'peer', memory: 'ucx' });
    const src = engine.allocate('src', 1 << 20);
    const dst = engine.allocate('dst', 1 << 20);
    // UCX allocated them: no POSIX shm segment of the engine's behind them
    expect([src.descriptor(), dst.descriptor()]).toMatchObject([{ shm: '' }, { shm: '' }]);
    await engine.connect();
    expect((engine.backend as UcxBackend).endpointModes()).toEqual(new Map([[0, 'peer']]));
    const stream = { sender: 0, receiver: 0, iteration: 5 };
    fillPattern(src, 0, 1 << 20, stream);
    poisonPattern(dst, 0, 1 << 20, stream);
    const plan = await engine.prepare([{ op: 'WRITE', peer: 0, local: 'src', localOffset: 0, remote: 'dst', remoteOffset: 0, length: 1 << 20 }]);
    await Promise.all([0, 1, 2, 3].map(() => engine.execute(plan)));
    expect(checkPattern(dst, 0, 1 << 20, stream)).toBeUndefined();
    expect((engine.backend as UcxBackend).progressThreadCalls()).toBeGreaterThan(0);
  });

  it('without it there is no progress thread; elsewhere than ucx it is refused', async () => {
    const engine = await single('ucx');
    expect((engine.backend as UcxBackend).progressThreadCalls()).toBeUndefined();
    expect(parseSweepArgs(['--enable_pt']).backend).toBe('ucx');
    expect(sweepEngineOptions(parseSweepArgs(['--enable_pt']), sweepRoles(2, 'pairwise'), rankFromEnv({}))).toEqual({ ucx: { progressThread: true } });
    expect(() => parseSweepArgs(['--enable_pt', '--backend', 'shm'])).toThrow(/--enable_pt: a progress thread drives UCX workers .*the shm backend has none to drive/);
  });
});

describe('the other nixlbench flags are honoured or refused, never dropped', () => {
  it('--device_list gives each pairwise rank its NIC (UCX_NET_DEVICES), nixlbench indexing, and is refused without UCX', () => {
    const o = parseSweepArgs(['--device_list', 'mlx5_0,mlx5_1', '--num_initiator_dev', '2', '--num_target_dev', '2']);
    const roles = sweepRoles(4, 'pairwise', 2, 2);
    expect([0, 1, 2, 3].map((rank) => deviceOfRank(o.nixlbench.deviceList!, roles, rank, 'SG'))).toEqual(['mlx5_0', 'mlx5_1', 'mlx5_0', 'mlx5_1']);
    expect(sweepEngineOptions(o, roles, { ...rankFromEnv({}), rank: 3 })).toEqual({ ucx: { netDevices: 'mlx5_1' } });
    expect(() => deviceOfRank(['mlx5_0'], roles, 0, 'SG')).toThrow(/needs one device per initiator and per target \(2 and 2\), not 1/);
    expect(() => parseSweepArgs(['--device_list', 'mlx5_0', '--backend', 'shm'])).toThrow(/--device_list names the NICs UCX uses .*the shm backend uses no NIC/);
  });

  it('refuses what has no counterpart, one sentence each', () => {
    expect(() => parseSweepArgs(['--worker_type', 'nvshmem'])).toThrow(/--worker_type nvshmem: only nixl/);
    expect(() => parseSweepArgs(['--progress_threads', '2'])).toThrow(/--progress_threads 2: NIXL's UCX threadpool/);
    expect(() => parseSweepArgs(['--config_file', 'x.toml'])).toThrow(/TOML config files are not read here/);
    expect(() => parseSweepArgs(['--prepared_xfer'])).toThrow(/--prepared_xfer is a nixlbench flag the sweep does not take: the engine builds a transfer one way only/);
    expect(() => parseSweepArgs(['--filepath', '/tmp/x'])).toThrow(/--filepath is a nixlbench flag .*storage backend/);
    expect(() => parseSweepArgs(['--no_such_flag'])).toThrow(/unknown command line flag 'no_such_flag'/);
    // the defaults nixlbench prints are accepted, as they change nothing
    expect(() => parseSweepArgs(['--worker_type', 'nixl', '--progress_threads', '0', '--device_list', 'all'])).not.toThrow();
  });

  it('--use_hugepages on ucx: the engine huge pages registered with UCX (announced); with --ucx-memory ucx refused', () => {
    const o = parseSweepArgs(['--backend', 'ucx', '--use_hugepages']);
    expect(sweepNotes(o, {})).toContain("--use_hugepages: DRAM buffers are the engine's huge pages, registered with UCX (as NIXL registers nixlbench's), not UCX-allocated memory");
    expect(() => sweepNotes(o, { XFER_UCX_MEMORY: 'ucx' })).toThrow(/--use_hugepages with --ucx-memory ucx .*leave one out/);
    expect(sweepNotes(o, { XFER_UCX_MEMORY: 'registered' })).toHaveLength(1);
  });

  it('announces the flags that allocate nothing in this run (no VRAM for VMM, no DRAM for huge pages)', () => {
    expect(parseSweepArgs(['--enable_vmm']).nixlbench.notes).toContain('--enable_vmm: no VRAM buffers in this run (both seg types are DRAM), so nothing is allocated through CUDA VMM');
    const vram = ['--initiator_seg_type', 'VRAM', '--target_seg_type', 'VRAM'];
    expect(parseSweepArgs(['--use_hugepages', ...vram]).nixlbench.notes[0]).toMatch(/--use_hugepages: no DRAM buffers in this run/);
  });
});

describe('--mode MG (several devices per process)', () => {
  it('pairs device i of the initiator process with device i of the target, each with its own region', () => {
    const o = parseSweepArgs(['--mode', 'MG', '--num_initiator_dev', '2', '--num_target_dev', '2', '--max_block_size', '8K']);
    const roles = mgRoles(2, o.scheme, 2, 2);
    expect(rankRegions(roles, 0, o).map((r) => [r.name, r.device, r.bytes])).toEqual([
      ['sweep-d0', 0, 8192],
      ['sweep-d1', 1, 8192],
    ]);
    const step = { blockSize: 4096, batchSize: 1, iterations: 4, warmup: 0 };
    expect(laneRequests(roles.pairs, 0, 'WRITE', step, 0, o).map((r) => `${r.local}->${r.peer}:${r.remote}`)).toEqual(['sweep-d0->1:sweep-d0', 'sweep-d1->1:sweep-d1']);
    // every device's area is checked, each with its own pattern stream
    expect(stepAreas(roles.pairs, 1, 'WRITE', step, o).map((a) => `${a.region}#${a.stream}`)).toEqual(['sweep-d0#0', 'sweep-d1#1']);
    expect(() => mgRoles(4, 'pairwise', 2, 2)).toThrow(/--mode MG: one initiator process and one target process .* 2 ranks, not 4/);
    expect(() => mgRoles(2, 'onetomany', 1, 2)).toThrow(/only the pairwise scheme/);
    expect(() => mgRoles(2, 'pairwise', 2, 1)).toThrow(/must equal --num_target_dev/);
  });
});

describe('--initiator_seg_type VRAM picks a GPU backend', () => {
  const vram = { backend: 'shm' as const, backendGiven: false, initiatorSegType: 'VRAM' as const, targetSegType: 'VRAM' as const };
  const probe = (available: string[], ucxCuda = false): VramProbe => ({
    availability: (name) => (available.includes(name) ? { name, available: true, detail: '' } : { name, available: false, reason: `${name} missing` }),
    ucxHasCuda: () => ucxCuda,
  });

  it('cuda first, then ucx with a CUDA transport; with neither, why each is out', () => {
    expect(chooseSweepBackend(vram, probe(['cuda', 'ucx']))).toBe('cuda');
    expect(chooseSweepBackend(vram, probe(['ucx'], true))).toBe('ucx');
    expect(() => chooseSweepBackend(vram, probe(['ucx'], false))).toThrow(
      'VRAM segments need a backend that moves GPU memory, and none can run here (cuda: cuda missing; ucx: this UCX has no CUDA transport (no libuct_cuda module))',
    );
    expect(chooseSweepBackend({ ...vram, initiatorSegType: 'DRAM', targetSegType: 'DRAM' }, probe([]))).toBe('shm');
    expect(chooseSweepBackend({ ...vram, backend: 'nccl', backendGiven: true }, probe([]))).toBe('nccl');
  });

  it('an explicit shm with VRAM is refused before anything is allocated', () => {
    expect(() => parseSweepArgs(['--backend', 'shm', '--initiator_seg_type', 'VRAM'])).toThrow(/--backend shm moves host memory only; VRAM segments need/);
  });
});

describe("nixlbench's command line exactly as gflags reads it", () => {
  it('takes every form gflags takes: one or two dashes, =value or the next word, --flag / --noflag / --flag=<gflags bool>', () => {
    const same = parseSweepArgs(['--num_iter', '32', '--check_consistency']);
    for (const argv of [
      ['-num_iter', '32', '-check_consistency'],
      ['--num_iter=32', '--check_consistency=true'],
      ['-num_iter=32', '--check_consistency=YES'],
      ['--num_iter', '0x20', '--check_consistency=t'],
      ['--nocheck_consistency', '--num_iter=32', '--check_consistency=1'],
    ]) {
      expect(parseSweepArgs(argv), argv.join(' ')).toEqual(same);
    }
    expect(parseSweepArgs(['--check_consistency', '--check_consistency=n']).checkConsistency).toBe(false); // the last one wins
    expect(parseSweepArgs(['-nocheck_consistency']).checkConsistency).toBe(false);
    expect(parseSweepArgs(['--num_iter', '32', '--']).numIter).toBe(32); // -- ends the flags
    // a value may start with a dash: gflags takes the next word whatever it is
    expect(parseSweepArgs(['--benchmark_group', '-g1']).nixlbench.runtime.benchmarkGroup).toBe('-g1');
  });

  it("refuses what gflags or nixlbench refuses, in one sentence with their words", () => {
    expect(() => parseSweepArgs(['--op_type', 'read'])).toThrow("--op_type: Invalid op type: read. Must be one of [READ, WRITE] (nixlbench's check)");
    expect(() => parseSweepArgs(['--op_type=Write'])).toThrow('Invalid op type: Write. Must be one of [READ, WRITE]');
    expect(() => parseSweepArgs(['--initiator_seg_type', 'vram'])).toThrow("--initiator_seg_type must be one of DRAM, VRAM, got 'vram'");
    expect(() => parseSweepArgs(['--scheme', 'Pairwise'])).toThrow(/--scheme must be one of/);
    expect(() => parseSweepArgs(['--mode', 'mg'])).toThrow(/--mode must be one of SG, MG/);
    expect(() => parseSweepArgs(['--num_iter'])).toThrow("--num_iter: flag 'num_iter' is missing its argument (gflags)");
    expect(() => parseSweepArgs(['--num_iter', '1e3'])).toThrow("--num_iter: illegal value '1e3' specified for int32 flag 'num_iter'");
    expect(() => parseSweepArgs(['--num_iter', '10x'])).toThrow(/illegal value '10x' specified for int32 flag 'num_iter'/);
    expect(() => parseSweepArgs(['--max_batch_size', '-2'])).toThrow(/illegal value '-2' specified for uint64 flag 'max_batch_size'/);
    expect(() => parseSweepArgs(['--check_consistency=maybe'])).toThrow(/illegal value 'maybe' specified for bool flag 'check_consistency'/);
    expect(() => parseSweepArgs(['--nonum_iter'])).toThrow(/boolean value \(nonum_iter\) specified for the non-boolean flag 'num_iter'/);
    // gflags leaves `false` as a word nixlbench ignores, so the check would run: refused, saying how to write it
    expect(() => parseSweepArgs(['--check_consistency', 'false'])).toThrow("'false' is not a flag: nixlbench takes flags only and would ignore it; a boolean takes its value with '=' (--check_consistency=false)");
    expect(() => parseSweepArgs(['--', '--num_iter', '8'])).toThrow(/'--num_iter' is not a flag \(after --, where gflags stops reading flags\)/);
    expect(() => parseSweepArgs(['--flagfile=f.txt'])).toThrow(/--flagfile is disabled for nixlbench/);
    expect(() => parseSweepArgs(['--asio_port', '70000'])).toThrow('Invalid value for --asio_port: 70000 (must be <= 65535)');
    expect(() => parseSweepArgs(['--worker_type', 'NIXL'])).toThrow(/--worker_type NIXL: only nixl/);
  });
});

describe("nixlbench's reading of numbers, --use_hugepages and its check order (utils.cpp loadParams, gflags' ParseFrom)", () => {
  it('takes a leading blank and a sign as strtoll does: --num_iter= 32 is 32, --warmup_iter -5 is -5, rounded as nixlbench rounds it', () => {
    expect(parseSweepArgs(['--num_iter= 32']).numIter).toBe(32);
    expect(parseSweepArgs(['--num_iter', '\t+32']).numIter).toBe(32);
    expect(parseSweepArgs(['--total_buffer_size= 8388608', '--max_block_size', '4M']).totalBufferSize).toBe(8388608);
    const o = parseSweepArgs(['--warmup_iter', '-5']);
    expect(o.warmupIter).toBe(-5);
    // nixlbench: warmup_iter += partition - (warmup_iter % partition) with C++'s remainder: -5 + 16 + 5 = 16
    expect(adjustIterations(o)).toContain('WARNING: Adjusting warmup_iter to 16 to allow equal distribution to 1 threads');
    expect(o.warmupIter).toBe(16);
    // -37 stays negative (-16): nixlbench then runs no warm-up (`if (skip > 0)`), nor does the sweep
    const negative = parseSweepArgs(['--warmup_iter', '-37', '--max_block_size', '4K']);
    adjustIterations(negative);
    expect(negative.warmupIter).toBe(-16);
    expect(sweepSteps(negative).map((s) => s.warmup)).toEqual([0]);
    // what strtoll does not take stays refused: hex after a blank or a sign, a trailing blank, a minus on an unsigned flag
    for (const [flag, value] of [['num_iter', ' 0x20'], ['num_iter', '-0x20'], ['num_iter', '32 '], ['max_batch_size', ' -2']]) {
      expect(() => parseSweepArgs([`--${flag}`, value]), value).toThrow(/illegal value/);
    }
  });

  it('--use_hugepages rounds total_buffer_size up to 2 MiB first, with its message, and checks the rounded size', () => {
    // 3000000 B rounds to 4 MiB: a 4 MiB block then fits (refused without the flag, as nixlbench refuses it)
    expect(() => parseSweepArgs(['--total_buffer_size', '3000000', '--max_block_size', '4M'])).toThrow(/Incorrect buffer size configuration for Initiator/);
    const o = parseSweepArgs(['--total_buffer_size', '3000000', '--max_block_size', '4M', '--use_hugepages']);
    expect(o.totalBufferSize).toBe(4194304);
    expect(o.nixlbench.notes[0]).toBe('Rounding total_buffer_size from 3000000 to 4194304 for 2MB hugepage alignment.');
    // 3 MiB with 3 threads divides evenly, but rounded to 4 MiB it does not: nixlbench refuses it
    expect(parseSweepArgs(['--total_buffer_size', '3145728', '--num_threads', '3', '--max_block_size', '64K']).totalBufferSize).toBe(3145728);
    expect(() => parseSweepArgs(['--total_buffer_size', '3145728', '--num_threads', '3', '--max_block_size', '64K', '--use_hugepages'])).toThrow(
      "Rounding total_buffer_size from 3145728 to 4194304 for 2MB hugepage alignment.\nTotal_buffer_size must be divisible by the product of num_threads and num_initiator_dev, next such value is 4194306 (nixlbench's check)",
    );
    expect(hugepageRounding(4194304, true)).toEqual({ totalBufferSize: 4194304 });
  });

  it('reports the buffer error before the iteration factor, the iteration factor before divisibility', () => {
    expect(() => parseSweepArgs(['--total_buffer_size', '1M', '--max_block_size', '2M', '--large_blk_iter_ftr', '0'])).toThrow(/^Incorrect buffer size configuration for Initiator/);
    expect(() => parseSweepArgs(['--total_buffer_size', '1000000', '--num_threads', '3', '--max_block_size', '4K', '--large_blk_iter_ftr', '0'])).toThrow(
      "iter_factor must be greater than 0 (nixlbench's check)",
    );
  });
});

describe("nixlbench's P99 (xferMetricStats::p99: the sorted samples' element at floor(0.99 n))", () => {
  it('takes one sample above the nearest rank when n is a multiple of 100', () => {
    const shuffled = (n: number) => Array.from({ length: n }, (_, i) => ((i * 7919) % n) + 1); // 1..n, out of order
    // n = 400: nixlbench's samples[396] is the 397th (the nearest rank would be the 396th)
    expect(timingColumns({ prepUs: shuffled(400), postUs: shuffled(100), txUs: shuffled(7) })).toMatchObject({ p99PrepUs: 397, p99PostUs: 100, p99TxUs: 7 });
    expect(timingColumns({ prepUs: shuffled(1000), postUs: [], txUs: [5] })).toMatchObject({ p99PrepUs: 991, avgPostUs: 0, p99PostUs: 0, p99TxUs: 5 });
    expect(nixlbenchPercentile(shuffled(250), 0.99)).toBe(248); // floor(247.5) = 247: the 248th
  });
});
