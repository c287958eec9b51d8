// The nixl kinds sweep, ep, kvpipe and the real-tool kinds: the examples validate, rules catch
// what the benches would refuse (located in the config), the command each rank runs, default
// metrics, and the verdicts (expected bandwidth, verified ranks and rounds).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, test } from 'vitest';
import { parseYaml } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { formatIssue } from '../../framework/config/issue.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { sweepKind } from '../../framework/types/nixl/kinds/sweep.ts';
import { epKind } from '../../framework/types/nixl/kinds/ep.ts';
import { kvpipeKind } from '../../framework/types/nixl/kinds/kvpipe.ts';
import { cacheEngineKind } from '../../framework/types/nixl/kinds/cache-engine.ts';
import { lmcacheKind, nixlbenchKind, nixlEpPerfKind } from '../../framework/types/nixl/kinds/tool.ts';
import type { Metric } from '../../framework/metrics/metric.ts';
import { nixlConfig } from '../../framework/types/nixl/common.ts';
import { renderNixlJobScript } from '../../framework/types/nixl/job/job-script.ts';

type Json = Record<string, unknown>;
const root = path.resolve(import.meta.dirname, '../..');
const examples = path.join(root, 'test_configs/nixl/perf');
const example = (name: string) => parse(readFileSync(path.join(examples, `${name}.yaml`), 'utf8')) as Json;
const issues = (config: Json) => validateConfig(nixlType, parseYaml(stringify(config), 'test_configs/nixl/perf/t.yaml'), 'test_configs/nixl/perf/t.yaml', path.join(root, 'test_configs/nixl/perf/t.yaml')).map(formatIssue);
const ctx = (config: Json) => ({ config, configDir: examples, logDir: '/logs/nixl_perf_t', packageRoot: root });
const with_ = (config: Json, section: string, values: Json, benchmark: Json = {}) => ({
  ...config,
  benchmark: { ...(config.benchmark as Json), ...benchmark },
  [section]: { ...(config[section] as Json), ...values },
});
const bw = (block: number, value: number, op = 'WRITE'): Metric => ({ name: 'BW_GBPS', value, unit: 'GB/s', labels: { block_size: block, batch_size: 1, op_type: op } });

describe('examples', () => {
  test('every sweep, ep and kvpipe example is valid (the cuda ones name GPUs: they need one)', () => {
    expect(nixlType.supportedGpus(example('sweep_cuda_vram'))).toContain('H200');
    expect(nixlType.supportedGpus(example('sweep_shm_read_write'))).toBeUndefined();
    for (const name of ['sweep_shm_read_write', 'sweep_ucx_read_write', 'ep_shm_4ranks', 'kvpipe_shm_16x8M', 'kvpipe_shm_16x8M_work', 'kvpipe_shm_100x1M', 'kvpipe_shm_100x1M_work', 'sweep_cuda_vram', 'ep_cuda_2gpu', 'kvpipe_cuda', 'cache_engine_shm']) {
      expect(issues(example(name)), name).toEqual([]);
    }
  });
});

describe('sweep kind', () => {
  const sweep = example('sweep_shm_read_write');

  test("the ranks run nixlbench's flags", () => {
    const rank = sweepKind.rankCommand(ctx(with_(sweep, 'sweep', { expect: { '64M': 46.48 }, tolerance: 0.05 })));
    expect(rank.logFile).toBe('sweep.log');
    expect(rank.argv).toEqual([
      'sweep', '--backend', 'shm', '--op_type', 'READ,WRITE',
      '--initiator_seg_type', 'DRAM', '--target_seg_type', 'DRAM', '--scheme', 'pairwise',
      '--start_block_size', '4096', '--max_block_size', '67108864', '--num_iter', '20', '--warmup_iter', '4', '--large_blk_iter_ftr', '4',
      '--tolerance', '0.05', '--expect', '67108864:46.48', '--check_consistency',
    ]);
  });

  test('rules: memory the backend cannot move, ranks a scheme cannot split, a buffer over the total', () => {
    expect(issues(with_(sweep, 'sweep', { initiator_seg_type: 'VRAM' }))).toEqual([expect.stringMatching(/sweep\.initiator_seg_type: backend shm moves host memory only, not gpu memory/)]);
    expect(issues(with_(sweep, 'sweep', {}, { ranks: 3 }))).toEqual([expect.stringMatching(/benchmark\.ranks: scheme pairwise with 3 ranks: cannot split/)]);
    expect(issues(with_(sweep, 'sweep', { total_buffer_size: '32M' }))).toEqual([expect.stringMatching(/Incorrect buffer size configuration for Initiator\(max_block_size \* max_batch_size\) is > \(total_buffer_size \/ num_initiator_dev\) \(nixlbench's check\)/)]);
    expect(issues(with_(sweep, 'sweep', { max_block_size: '1.3K' }))).toEqual([expect.stringMatching(/sweep\.max_block_size: '1\.3K' is not a whole number of bytes/)]);
    expect(issues(with_(sweep, 'sweep', { scheme: 'ring' }))[0]).toMatch(/sweep\.scheme/);
  });

  test('metrics per block size; aggregate columns for pairwise runs of more than 2 ranks', () => {
    expect(sweepKind.metrics(sweep)[0]).toMatchObject({ logFile: 'sweep.log', extractor: 'nixlbench' });
    expect(sweepKind.metrics(sweep)[0].names).not.toContain('AGG_BW_GBPS');
    expect(sweepKind.metrics(with_(sweep, 'sweep', {}, { ranks: 4 }))[0].names).toContain('AGG_BW_GBPS');
  });

  test('verdict: every op has a table, every expected block size within tolerance', () => {
    const config = with_(sweep, 'sweep', { expect: { '64M': 46.48 } });
    expect(sweepKind.verdict!(config, [bw(67108864, 44, 'READ'), bw(67108864, 47, 'WRITE')])).toEqual([]);
    expect(sweepKind.verdict!(config, [bw(67108864, 30, 'READ')])).toEqual([
      'expected bandwidth: READ block 67108864 B batch 1: 30.000000 GB/s is 35.5% below the expected 46.48 GB/s (tolerance 10.0%)',
      'no WRITE table in sweep.log',
    ]);
  });
});

describe('ucx section (the engine\'s ucx backend)', () => {
  const sweep = { ...example('sweep_ucx_read_write'), ucx: { error_handling: 'peer', memory: 'registered', post: 'nixl', completion: 'flush', tls: 'tcp', net_devices: 'lo' } };

  test('reaches every rank as its environment', () => {
    expect(issues(sweep)).toEqual([]);
    const script = renderNixlJobScript({ testId: 'nixl_perf_t', config: nixlConfig(sweep), logDir: '/logs/t', packageRoot: root, rank: sweepKind.rankCommand(ctx(sweep)) });
    for (const line of ['export XFER_UCX_ERROR_HANDLING=peer', 'export XFER_UCX_MEMORY=registered', 'export XFER_UCX_POST=nixl', 'export XFER_UCX_COMPLETION=flush', 'export UCX_TLS=tcp', 'export UCX_NET_DEVICES=lo']) {
      expect(script).toContain(line);
    }
  });

  test('is refused where it would be ignored, and names a bad choice', () => {
    const shm = { ...example('sweep_shm_read_write'), ucx: { error_handling: 'none' } };
    expect(issues(shm)).toEqual([expect.stringMatching(/ucx: applies to backend ucx only; this config uses shm/)]);
    expect(issues({ ...sweep, ucx: { error_handling: 'strict' } })[0]).toMatch(/ucx\.error_handling/);
    expect(issues({ ...sweep, ucx: { post: 'fast' } })[0]).toMatch(/ucx\.post/);
    const tool = { metadata: { description: 'x' }, benchmark: { kind: 'nixlbench', ranks: 2, backend: 'ucx' }, nixlbench: { path: '/opt/nixl/bin/nixlbench' }, ucx: { error_handling: 'none' } };
    expect(issues(tool)).toEqual([expect.stringMatching(/ucx: applies to the transfer engine's kinds; nixlbench takes its UCX settings/)]);
  });

  test('sweep: pipeline_depth reaches the ranks; total_buffer_size does not limit it, as in nixlbench', () => {
    expect(sweepKind.rankCommand(ctx(with_(sweep, 'sweep', { pipeline_depth: 4 }))).argv).toEqual(expect.arrayContaining(['--pipeline_depth', '4']));
    expect(issues(with_(sweep, 'sweep', { pipeline_depth: 4, total_buffer_size: '128M' }))).toEqual([]);
    expect(issues(with_(sweep, 'sweep', { num_threads: 3, total_buffer_size: 1_000_000, max_block_size: '4K' }))).toEqual([expect.stringMatching(/next such value is 1000002/)]);
  });
});

describe('ep kind', () => {
  const ep = example('ep_shm_4ranks');

  test('the ranks run the EP options; the control plane alone when no modes are listed', () => {
    expect(epKind.rankCommand(ctx(ep)).argv).toEqual([
      'ep', '--backend', 'shm', '--experts-per-rank', '8,32', '--mode', 'dispatch,combine,e2e', '--tokens', '128', '--hidden', '2048', '--topk', '2', '--warmup', '5', '--iters', '20', '--control-plane',
    ]);
    const control = { ...ep, ep: { control_plane: true, control_plane_test: 'connect' } };
    // no experts_per_rank: the command's defaults, the tests' own (data plane 8, control plane 8 and 32)
    expect(epKind.rankCommand(ctx(control)).argv).toEqual(['ep', '--backend', 'shm', '--test', 'connect', '--control-plane']);
    // one operation: the test's line (no table, no TOTAL)
    expect(epKind.metrics(control)[0].names).toEqual(['CP_AVG_MS', 'CP_MIN_MS', 'CP_MAX_MS']);
    const line = (experts: number): Metric => ({ name: 'CP_AVG_MS', value: 1, unit: 'ms', labels: { operation: 'connect', experts_per_rank: experts, across: 'ranks' } });
    expect(epKind.verdict!(control, [line(8), line(32)])).toEqual([]);
    expect(epKind.verdict!(control, [line(8)])).toEqual(['no control-plane CONNECT line for 32 experts/rank in ep.log']);
  });

  test('rules and verdict', () => {
    expect(issues(with_(ep, 'ep', { hidden: 1000 }))).toEqual([expect.stringMatching(/ep\.hidden: hidden 1000 must be a multiple of 128/)]);
    expect(issues(with_(ep, 'ep', { topk: 40, experts_per_rank: [8, 32] }))).toEqual([expect.stringMatching(/ep\.topk: topk 40 exceeds the 32 experts of 4 ranks/)]);
    expect(issues(with_(ep, 'ep', { memory: 'gpu' }))).toEqual([expect.stringMatching(/backend shm moves host memory only/)]);
    expect(issues(with_(ep, 'ep', { initiated_by: 'gpu' }))).toEqual([
      expect.stringMatching(/ep\.initiated_by: gpu-initiated dispatch\/combine needs backend cuda \(kernels write into peers' GPU memory through CUDA IPC\), not shm/),
    ]);
    expect(issues(with_(example('ep_cuda_2gpu'), 'ep', { initiated_by: 'host' }, { cuda_copy: 'copy-engine' }))).toEqual([]);
    expect(epKind.rankCommand(ctx(with_(example('ep_cuda_2gpu'), 'ep', { initiated_by: 'host' }))).argv).toContain('--initiated-by');
    expect(issues(with_(ep, 'ep', {}, { cuda_copy: 'kernel' }))).toEqual([expect.stringMatching(/benchmark\.cuda_copy: chooses how the cuda backend copies; this config's backend is shm/)]);
    expect(issues(with_(example('ep_cuda_2gpu'), 'ep', {}, { cuda_copy: 'sm' }))[0]).toMatch(/benchmark\.cuda_copy/);
    const passed = (mode: string, experts: number, value: number): Metric => ({ name: 'RANKS_PASSED', value, unit: 'count', labels: { mode, experts_per_rank: experts } });
    const cp = (experts: number): Metric => ({ name: 'CP_TOTAL_MS', value: 1, unit: 'ms', labels: { experts_per_rank: experts } });
    const all = [8, 32].flatMap((e) => ['dispatch', 'combine', 'e2e'].map((m) => passed(m, e, 4)));
    expect(epKind.verdict!(ep, [...all, cp(8), cp(32)])).toEqual([]);
    expect(epKind.verdict!(ep, [...all.slice(1), passed('dispatch', 8, 3), cp(8)])).toEqual([
      'dispatch, 8 experts/rank: 3/4 ranks verified their data',
      'no control-plane table for 32 experts/rank in ep.log',
    ]);
  });
});

describe('kvpipe kind', () => {
  const kv = example('kvpipe_shm_16x8M_work');

  test('the ranks run the pipe with sizes in bytes', () => {
    expect(kvpipeKind.rankCommand(ctx(kv)).argv).toEqual([
      'kvpipe', '--backend', 'shm', '--obj-size', '8388608', '--buffer-size', '67108864', '--num-objs', '16', '--num-rounds', '2', '--simulate-work',
    ]);
    const shaped = { ...kv, kvpipe: { obj_shape: [32, 2, 256, 1024], dtype: 'bf16', buffer_size: '4G' } };
    expect(kvpipeKind.rankCommand(ctx(shaped)).argv.slice(3, 5)).toEqual(['--obj-size', '33554432']);
  });

  test('rules and verdict', () => {
    expect(issues(with_(kv, 'kvpipe', {}, { ranks: 3 }))).toEqual([expect.stringMatching(/kvpipe runs 2 ranks/)]);
    expect(issues(with_(kv, 'kvpipe', { buffer_size: '4M' }))).toEqual([expect.stringMatching(/an object of 8388608 bytes does not fit the 4194304-byte buffer/)]);
    expect(issues(with_(kv, 'kvpipe', { batch_size: 9 }))).toEqual([expect.stringMatching(/batch_size 9 x 8388608 bytes exceeds/)]);
    const m = (name: string, value: number, labels = {}): Metric => ({ name, value, unit: '', labels });
    expect(kvpipeKind.verdict!(kv, [m('VERIFIED_ROUNDS', 2), m('SEND_TIME_S', 1, { round: 1 }), m('SEND_TIME_S', 1, { round: 2 })])).toEqual([]);
    expect(kvpipeKind.verdict!(kv, [m('SEND_TIME_S', 1, { round: 1 })])).toEqual([
      'the receiver verified 0 of 2 round(s) ("All data verified successfully!" in kvpipe.log)',
      'the sender finished 1 of 2 round(s) in kvpipe.log',
    ]);
  });
});

describe('cache-engine kind (the CacheEngine test as a config, not only a command)', () => {
  const ce = example('cache_engine_shm');

  test('the ranks run `disagg-bench cache-engine` with the section as its options', () => {
    expect(cacheEngineKind.rankCommand(ctx(ce))).toEqual({
      argv: ['cache-engine', '--backend', 'shm', '--num-chunks', '6', '--num-rounds', '2', '--num-layers', '2', '--num-heads', '1', '--head-size', '64', '--num-blocks', '128', '--buffer-size', '262144'],
      logFile: 'cache_engine.log',
    });
    expect(cacheEngineKind.metrics(ce)[0]).toMatchObject({ logFile: 'cache_engine.log', extractor: 'lmcache' });
  });

  test("rules: two ranks, the command's own checks in LMCache's words, memory the backend moves; verdict", () => {
    expect(issues(with_(ce, 'cache_engine', {}, { ranks: 3 }))).toEqual([expect.stringMatching(/cache-engine runs 2 ranks/)]);
    expect(issues(with_(ce, 'cache_engine', { num_chunks: 9 }))).toEqual([expect.stringMatching(/cache_engine: Number of chunks must be <= 8 \(num_blocks x block_size \/ chunk_size\)/)]);
    expect(issues(with_(ce, 'cache_engine', { buffer_size: '64K' }))).toEqual([expect.stringMatching(/a chunk of 131072 bytes does not fit the 65536-byte NIXL buffer/)]);
    expect(issues(with_(ce, 'cache_engine', { memory: 'gpu' }))).toEqual([expect.stringMatching(/backend shm moves host memory only/)]);
    expect(issues(with_(ce, 'cache_engine', { slots: 3 }))[0]).toMatch(/cache_engine\.slots: is not a known key here/);
    const m = (name: string, value: number, labels = {}): Metric => ({ name, value, unit: '', labels });
    const rounds = [1, 2].flatMap((round) => [m('STORE_TIME_S', 1, { round }), m('RETRIEVE_TIME_S', 1, { round })]);
    expect(cacheEngineKind.verdict!(ce, [m('VERIFIED_ROUNDS', 2), ...rounds])).toEqual([]);
    expect(cacheEngineKind.verdict!(ce, [m('VERIFIED_ROUNDS', 1), rounds[0]])).toEqual([
      'the receiver verified 1 of 2 round(s) ("Data verification successful" in cache_engine.log)',
      'the sender stored 1 of 2 round(s) in cache_engine.log',
      'the receiver retrieved 0 of 2 round(s) in cache_engine.log',
    ]);
  });
});

describe('real-tool kinds', () => {
  const base = { metadata: { description: 'x' }, slurm: { job_time: '00:05:00' } };

  test('nixlbench: job steps (private etcd up before, report and etcd down after), spec artefact, rules', () => {
    const config = { ...base, benchmark: { kind: 'nixlbench', ranks: 2, nodes: 2, backend: 'libfabric' }, nixlbench: { path: '/opt/nixl/bin/nixlbench', options: { initiator_seg_type: 'VRAM' }, expect: { '64M': 46.48 } } };
    expect(issues(config)).toEqual([]);
    const rank = nixlbenchKind.rankCommand(ctx(config));
    expect(rank.argv).toEqual(['nixl-tool', 'run', '/logs/nixl_perf_t/nixl-tool-spec.json']);
    expect(rank.prelude).toEqual([expect.stringMatching(/nixl-tool etcd-start --dir \/logs\/nixl_perf_t\/etcd --prefix xferbench\/disagg-nixl_perf_t\/ --host auto$/)]);
    expect(rank.cleanup).toEqual([expect.stringMatching(/nixl-tool report \/logs\/nixl_perf_t\/nixl-tool-spec.json \|\| true$/), expect.stringMatching(/nixl-tool etcd-stop --dir \/logs\/nixl_perf_t\/etcd \|\| true$/)]);
    expect(JSON.parse(rank.artefacts!['nixl-tool-spec.json']).commands[0]).toContain('--backend');
    expect(nixlbenchKind.binary(config)).toBe('/opt/nixl/bin/nixlbench');
    expect(issues({ ...config, benchmark: { ...config.benchmark, ranks: 4, nodes: 2 } })).toEqual([expect.stringMatching(/num_initiator_dev \+ num_target_dev = 2 processes, not 4/)]);
    expect(issues({ ...config, nixlbench: { options: { etcd_endpoints: 'http://x' } } })).toEqual([expect.stringMatching(/nixlbench\.options\.etcd_endpoints: etcd_endpoints is set by the adapter/)]);
    expect(nixlbenchKind.verdict!(config, [bw(67108864, 40)])).toEqual([expect.stringMatching(/13\.9% below the expected 46\.48 GB\/s/)]);
  });

  test('EP perf and LMCache: one task per node, a sender and a receiver', () => {
    const ep = { ...base, benchmark: { kind: 'nixl-ep-perf', ranks: 2, nodes: 2, backend: 'ucx' }, nixl_ep_perf: { dir: '/ws/ep', plane: 'data', processes_per_node: 8 } };
    expect(issues(ep)).toEqual([]);
    expect(issues({ ...ep, benchmark: { ...ep.benchmark, ranks: 16 } })).toEqual([expect.stringMatching(/one task per node \(ranks = nodes = 2\)/)]);
    expect(nixlEpPerfKind.rankCommand(ctx(ep)).prelude).toHaveLength(1);
    const lm = { ...base, benchmark: { kind: 'lmcache', ranks: 2, backend: 'ucx' }, lmcache: { script: '/ws/test_nixl_pipe.py' } };
    expect(issues(lm)).toEqual([]);
    expect(lmcacheKind.rankCommand(ctx(lm)).prelude).toEqual([]); // no etcd
  });
});
