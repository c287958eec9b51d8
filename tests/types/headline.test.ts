// Headline figures per test type, from real logs: each fixture is put where the type's metric specs
// read it, extracted as a finished job's logs are, and the headline asked through
// metrics/headline.ts as the digest, the report and the history gate ask it.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, test } from 'vitest';
import type { Metric } from '../../framework/metrics/metric.ts';
import { extractMetrics } from '../../framework/metrics/log-parser.ts';
import { headlineMetrics } from '../../framework/metrics/headline.ts';
import type { TestType } from '../../framework/contract/test-type.ts';
import { disaggType } from '../../framework/types/disagg.ts';
import { wideepType } from '../../framework/types/wideep.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { nixlKinds } from '../../framework/types/nixl/kinds.ts';
import { baseConfig, type Json } from '../fixtures/serving/base-config.ts';
import { maxOf } from '../../runners/common/stats.ts';

const root = path.resolve(import.meta.dirname, '../..');
const logs = path.join(root, 'tests/fixtures/logs');
const scratch = mkdtempSync(path.join(tmpdir(), 'headline-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;

const example = (name: string) => parse(readFileSync(path.join(root, 'test_configs/nixl/perf', `${name}.yaml`), 'utf8')) as Json;

/** The headline of a job whose log folder holds these fixtures (folder name -> fixture), and the extraction's problems. */
async function headlineFrom(type: TestType, config: Json, files: Record<string, string>, category = 'perf') {
  const dir = path.join(scratch, String(++folders));
  for (const [name, fixture] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    cpSync(path.join(logs, fixture), path.join(dir, name), { recursive: true });
  }
  const { metrics, problems } = await extractMetrics(dir, type.metrics(config, category));
  return { headline: headlineMetrics(type, config, category, metrics), problems, metrics };
}

const brief = (ms: Metric[]) => ms.map((m) => [m.name, m.labels, m.value]);

describe('serving (disagg, wideep)', () => {
  test('per concurrency: the throughputs upstream gates on, then median TTFT and E2EL', async () => {
    for (const type of [disaggType, wideepType]) {
      const { headline, problems } = await headlineFrom(type, baseConfig(), { '6_bench.log': 'serving/6_bench.log' });
      expect(problems).toEqual([]);
      expect(headline.map((m) => `${m.name}@${m.labels.concurrency}`)).toEqual([
        'SERVER_OUTPUT_TOKEN_THROUGHPUT@8', 'SERVER_TOTAL_TOKEN_THROUGHPUT@8', 'SERVER_MEDIAN_TTFT@8', 'SERVER_MEDIAN_E2EL@8',
        'SERVER_OUTPUT_TOKEN_THROUGHPUT@16', 'SERVER_TOTAL_TOKEN_THROUGHPUT@16', 'SERVER_MEDIAN_TTFT@16', 'SERVER_MEDIAN_E2EL@16',
      ]);
      expect(headline[0]).toMatchObject({ value: 449.19, unit: 'tok/s', higherIsBetter: true });
      expect(headline[5]).toMatchObject({ value: 1629.56 });
    }
  });

  test('without a config (an older record whose config is gone): the same figures, never an error', async () => {
    const { headline, metrics } = await headlineFrom(disaggType, baseConfig(), { '6_bench.log': 'serving/6_bench.log' });
    expect(headlineMetrics(disaggType, {}, 'perf', metrics)).toEqual(headline);
  });

  test('with speculative decoding the mean decoded tokens per iteration joins them (upstream adds d_al)', async () => {
    const { headline } = await headlineFrom(disaggType, baseConfig(), { '6_bench.log': 'serving/versions/v4-std-min-max-decoded-tokens.log' });
    expect(headline.filter((m) => m.name === 'SERVER_MEAN_AVG_DECODED_TOKENS_PER_ITER').map((m) => m.value)).toContain(2.41);
  });

  test('a client that does not print a gated figure (aiperf: no total token throughput) costs no problem', async () => {
    const config = baseConfig({ hardware: { num_gen_servers: 2 }, benchmark: { concurrency_list: '4 8', multi_round: 3, dataset_file: '/data/trace.jsonl' }, commands: { client: 'aiperf' } });
    const { headline, problems } = await headlineFrom(disaggType, config, { 'concurrency_8': 'aiperf/concurrency_8', 'concurrency_16': 'aiperf/concurrency_16' });
    expect(problems).toEqual([]);
    expect(headline.map((m) => m.name)).toContain('SERVER_OUTPUT_TOKEN_THROUGHPUT');
    expect(headline.map((m) => m.name)).not.toContain('SERVER_TOTAL_TOKEN_THROUGHPUT');
  });

  test('accuracy: the accuracy per dataset; a metrics override: the metrics it names', async () => {
    const accuracy = await headlineFrom(disaggType, baseConfig(), { '7_accuracy_eval_gsm8k.log': 'lm-eval/7_accuracy_eval_gsm8k.log' }, 'accuracy');
    expect(accuracy.headline.length).toBeGreaterThan(0);
    expect(new Set(accuracy.headline.map((m) => m.name))).toEqual(new Set(['ACCURACY']));
    const override = { log_file: '6_bench.log', extractor_pattern: 'Median TTFT \\(ms\\):\\s+([0-9.]+)', metric_names: ['MY_TTFT'], unit: 'ms' };
    const custom = await headlineFrom(disaggType, baseConfig({ benchmark: { metrics: override } }), { '6_bench.log': 'serving/6_bench.log' });
    expect(custom.headline.map((m) => m.name)).toEqual(['MY_TTFT', 'MY_TTFT']); // one per concurrency block
  });
});

describe('nixl kinds', () => {
  test('every registered kind names its headline', () => {
    expect(nixlKinds.filter((k) => typeof k.headline !== 'function').map((k) => k.name)).toEqual([]);
  });

  test('without a config (an older record whose config is gone): the figures of the kind its metrics are, never an error', async () => {
    const cases: [string, Record<string, string>][] = [
      ['ct_seed_read_shm', { 'ct_perftest.json': 'golden/kvbench-ct-task0.log' }],
      ['sequential_shm', { 'sequential_ct_perftest.json': 'golden/kvbench-sequential.json' }],
      ['sweep_shm_read_write', { 'sweep.log': 'nixl/sweep-shm.log' }],
      ['ep_shm_4ranks', { 'ep.log': 'nixl/nixl-ep-seed.log' }],
      ['kvpipe_shm_16x8M', { 'kvpipe.log': 'nixl/kvpipe-shm.log' }],
    ];
    for (const [name, files] of cases) {
      const { headline, metrics } = await headlineFrom(nixlType, example(name), files);
      expect(headline.length, name).toBeGreaterThan(0);
      expect(headlineMetrics(nixlType, {}, 'perf', metrics), name).toEqual(headline);
    }
  });

  test('CT perftest: the average latency per iteration', async () => {
    const { headline } = await headlineFrom(nixlType, example('ct_seed_read_shm'), { 'ct_perftest.json': 'golden/kvbench-ct-task0.log' });
    expect(brief(headline)).toEqual([['AVG_LATENCY_PER_ITER_S', {}, expect.any(Number)]]);
  });

  test('sequential CT and matgen: the workload latency of each iteration', async () => {
    for (const name of ['sequential_shm', 'matgen_llama405b_shm']) {
      const { headline } = await headlineFrom(nixlType, example(name), { 'sequential_ct_perftest.json': 'golden/kvbench-sequential.json' });
      expect(headline.map((m) => [m.name, m.labels.iteration])).toEqual([['WORKLOAD_LATENCY_MS', 1], ['WORKLOAD_LATENCY_MS', 2]]);
    }
  });

  test('sweep: the bandwidth at the largest block, then the peak where another block had it', async () => {
    const { headline, metrics } = await headlineFrom(nixlType, example('sweep_shm_read_write'), { 'sweep.log': 'nixl/sweep-shm.log' });
    const bw = metrics.filter((m) => m.name === 'BW_GBPS');
    const largest = maxOf(bw.map((m) => Number(m.labels.block_size)));
    expect(headline[0]).toMatchObject({ name: 'BW_GBPS', labels: { block_size: largest } });
    const peak = maxOf(bw.map((m) => m.value));
    expect(headline.some((m) => m.value === peak)).toBe(true);
    expect(headline.every((m) => m.name === 'BW_GBPS')).toBe(true);
  });

  test('ep: the e2e mode\'s average latency and bandwidth', async () => {
    const { headline } = await headlineFrom(nixlType, example('ep_shm_4ranks'), { 'ep.log': 'nixl/nixl-ep-seed.log' });
    expect(headline.filter((m) => m.name !== 'CP_TOTAL_MS').map((m) => [m.name, m.labels.mode, m.value])).toEqual([
      ['LAT_US_AVG', 'e2e', 519.3], ['BW_GBPS_AVG', 'e2e', 42.88],
    ]);
  });

  test('kvpipe: the pure-transfer throughput; cache-engine: store and retrieval throughput', async () => {
    const pipe = await headlineFrom(nixlType, example('kvpipe_shm_16x8M'), { 'kvpipe.log': 'nixl/kvpipe-shm.log' });
    expect(pipe.headline.map((m) => m.name)).toEqual(['PURE_THROUGHPUT_GBPS_AVG']);
    // both ranks' output in the one log, as the job writes it: the sender's stores, the receiver's retrievals
    const bothRanks = path.join(scratch, 'cache-engine-both.log');
    writeFileSync(bothRanks, ['task0', 'task1'].map((t) => readFileSync(path.join(logs, `golden/lmcache-cache-engine-${t}.log`), 'utf8')).join(''));
    const engine = await headlineFrom(nixlType, example('cache_engine_shm'), { 'cache_engine.log': path.relative(logs, bothRanks) });
    expect(engine.headline[0].name).toBe('MEAN_THROUGHPUT_GBPS');
    expect(engine.headline.slice(1).every((m) => m.name === 'RETRIEVAL_THROUGHPUT_GBPS')).toBe(true);
    expect(engine.headline.length).toBeGreaterThan(1);
  });
});

describe('the real NIXL tools', () => {
  const tool = (kind: string, section: string, options: Json) => ({ metadata: {}, benchmark: { kind, ranks: 2, backend: 'ucx' }, [section]: options });

  test('nixlbench: as the sweep; kvbench: as the perftest it ran', async () => {
    const nb = await headlineFrom(nixlType, tool('nixlbench', 'nixlbench', {}), { 'nixlbench.log': 'nixl/nixlbench-pairwise4.log' });
    expect(nb.headline.length).toBeGreaterThan(0);
    expect(nb.headline.every((m) => m.name === 'BW_GBPS')).toBe(true);
    const ct = await headlineFrom(nixlType, tool('kvbench', 'kvbench', { command: 'ct-perftest', script: 's', config_file: 'c' }), { 'kvbench-task0.log': 'golden/kvbench-ct-task0.log' });
    expect(ct.headline.map((m) => m.name)).toEqual(['AVG_LATENCY_PER_ITER_S']);
    const seq = await headlineFrom(nixlType, tool('kvbench', 'kvbench', { command: 'sequential-ct-perftest', script: 's', config_file: 'c' }), { 'kvbench.json': 'golden/kvbench-sequential.json' });
    expect(seq.headline.map((m) => m.name)).toEqual(['WORKLOAD_LATENCY_MS', 'WORKLOAD_LATENCY_MS']);
  });

  test('nixl-ep-perf: e2e latency and bandwidth, or the control plane\'s figures; lmcache: its throughput', async () => {
    const data = await headlineFrom(nixlType, tool('nixl-ep-perf', 'nixl_ep_perf', { dir: 'd', plane: 'data', processes_per_node: 2 }), { 'nixl-ep-perf.log': 'golden/nixl-ep-data-e2e.log' });
    expect(data.headline.map((m) => m.name)).toEqual(['LAT_US_AVG', 'BW_GBPS_AVG']);
    const cycle = await headlineFrom(nixlType, tool('nixl-ep-perf', 'nixl_ep_perf', { dir: 'd', plane: 'control', processes_per_node: 2 }), { 'nixl-ep-perf.log': 'golden/nixl-ep-control-cycle.log' });
    expect(new Set(cycle.headline.map((m) => m.name))).toEqual(new Set(['CP_TOTAL_MS']));
    const connect = await headlineFrom(nixlType, tool('nixl-ep-perf', 'nixl_ep_perf', { dir: 'd', plane: 'control', processes_per_node: 2 }), { 'nixl-ep-perf.log': 'golden/nixl-ep-control-connect.log' });
    expect(connect.headline.length).toBeGreaterThan(0);
    expect(connect.headline.map((m) => [m.name, m.labels.operation, m.labels.across])).toEqual(connect.headline.map(() => ['CP_AVG_MS', 'connect', 'ranks']));
    const lm = await headlineFrom(nixlType, tool('lmcache', 'lmcache', { script: 's' }), { 'lmcache-task0.log': 'golden/lmcache-pipe-v2-task0.log', 'lmcache-task1.log': 'golden/lmcache-pipe-v2-task1.log' });
    expect(lm.headline.length).toBeGreaterThan(0);
    expect(lm.headline.every((m) => m.unit === 'GB/s')).toBe(true);
  });

  test('a config that replaces the metrics headlines the metrics it names', async () => {
    const config = { ...example('sweep_shm_read_write'), benchmark: { ...(example('sweep_shm_read_write').benchmark as Json), metrics: { log_file: 'sweep.log', extractor_pattern: 'Ranks\\s+:\\s+(\\d+)', metric_names: ['RANKS'], unit: 'count' } } };
    const { headline } = await headlineFrom(nixlType, config, { 'sweep.log': 'nixl/sweep-shm.log' });
    expect(headline.length).toBeGreaterThan(0);
    expect(headline.map((m) => [m.name, m.value])).toEqual(headline.map(() => ['RANKS', 2]));
  });
});
