// The golden-log suite, NIXL side: for every NIXL-era tool whose output is parsed
// (nixlbench, kvbench's ct-perftest and sequential-ct-perftest, the NIXL EP perf tests, LMCache's
// disagg tests), a log in the tool's exact format goes in and the tool's values come out, by name,
// in results.json AND in the CSV. The logs are this project's own fixtures of upstream's shape
// (tests/fixtures/logs/golden/: nixlbench's printConfig/printStats columns, the NIXL logger and
// tabulate's table, kvbench's json.dump, the EP tests' "[Node N]" and "%-15s %-12.2f" lines,
// LMCache's logger with its file:line suffix); each is replayed through the whole framework
// (`vitest run --project nixl`, DEBUG_MODE=1) as the job log of a config of the tool's kind.
// LMCache's "GB/s" is bytes / 2^30 (every calculate_throughput()): its values come out as *_GIBPS
// as printed and *_GBPS x 1.073741824.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { PERF_CSV_FILE } from '../../framework/results/csv.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { runSuite } from '../fixtures/reliability/suite-run.ts';

const golden = path.resolve(import.meta.dirname, '../fixtures/logs/golden');
const scratch = mkdtempSync(path.join(tmpdir(), 'golden-nixl-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const GIB = 2 ** 30 / 1e9;
type Labels = Record<string, string | number>;
interface Expected {
  name: string;
  labels?: Labels;
  value: number;
}

interface Case {
  config: Record<string, unknown>;
  /** fixture -> name in the test's log folder */
  logs: Record<string, string>;
  /** files next to the config (kvbench's own config file) */
  beside?: Record<string, string>;
  expect: Expected[];
}

const base = { metadata: { description: 'golden log' }, slurm: { job_time: '00:05:00' } };
const row = (name: string, value: number, labels?: Labels): Expected => ({ name, value, labels });
const lmcacheRate = (stem: string, printed: number, labels?: Labels): Expected[] => [row(`${stem}_GIBPS`, printed, labels), row(`${stem}_GBPS`, printed * GIB, labels)];

const cases: Record<string, Case> = {
  golden_nixlbench: {
    config: { ...base, benchmark: { kind: 'nixlbench', ranks: 2, nodes: 2, backend: 'ucx' }, nixlbench: { path: '/opt/nixl/bin/nixlbench', options: { initiator_seg_type: 'VRAM', target_seg_type: 'VRAM', op_type: 'READ', max_batch_size: 4 } } },
    logs: { 'nixlbench-ucx-vram.log': 'nixlbench.log' },
    expect: [
      row('BW_GBPS', 0.731204, { block_size: 4096, batch_size: 1, op_type: 'READ' }),
      row('AVG_LAT_US', 1.7, { block_size: 4096, batch_size: 4, op_type: 'READ' }),
      row('BW_GBPS', 46.212275, { block_size: 67108864, batch_size: 4, op_type: 'READ' }),
      row('AVG_PREP_US', 24, { block_size: 67108864, batch_size: 4, op_type: 'READ' }),
      row('P99_POST_US', 3.8, { block_size: 1048576, batch_size: 4, op_type: 'READ' }),
      row('AVG_TX_US', 1460.4, { block_size: 67108864, batch_size: 1, op_type: 'READ' }),
      row('P99_TX_US', 5822, { block_size: 67108864, batch_size: 4, op_type: 'READ' }),
    ],
  },
  golden_nixlbench_pairwise4: {
    config: { ...base, benchmark: { kind: 'nixlbench', ranks: 4, nodes: 2, backend: 'ucx' }, nixlbench: { path: '/opt/nixl/bin/nixlbench', options: { num_initiator_dev: 2, num_target_dev: 2 } } },
    logs: { 'nixlbench-pairwise-4procs.log': 'nixlbench.log' },
    expect: [
      row('BW_GBPS', 22.640018, { block_size: 2097152, batch_size: 1, op_type: 'WRITE' }),
      row('AGG_BW_GBPS', 45.190544, { block_size: 2097152, batch_size: 1, op_type: 'WRITE' }),
      row('NETWORK_UTIL_PCT', 2.398102, { block_size: 8192, batch_size: 1, op_type: 'WRITE' }),
      row('AVG_LAT_US', 92.6, { block_size: 2097152, batch_size: 1, op_type: 'WRITE' }),
    ],
  },
  golden_nixlbench_older: {
    config: { ...base, benchmark: { kind: 'nixlbench', ranks: 2, nodes: 2, backend: 'ucx' }, nixlbench: { path: '/opt/nixl/bin/nixlbench', options: { start_batch_size: 32, max_batch_size: 32 } } },
    logs: { 'nixlbench-older-format.log': 'nixlbench.log' },
    expect: [
      // the older layout: no banner (no op type label), its three bandwidth units each as printed
      row('AVG_LAT_US', 2.87412, { block_size: 4096, batch_size: 32 }),
      row('BW_MIBPS', 10481, { block_size: 1048576, batch_size: 32 }),
      row('BW_GIBPS', 7.72288, { block_size: 65536, batch_size: 32 }),
      row('BW_GBPS', 10.99012, { block_size: 1048576, batch_size: 32 }),
    ],
  },
  golden_kvbench_ct: {
    config: { ...base, benchmark: { kind: 'kvbench', ranks: 4, backend: 'ucx' }, kvbench: { script: '/opt/nixl/benchmark/kvbench/main.py', command: 'ct-perftest', config_file: 'ct.yaml' } },
    beside: { 'ct.yaml': 'iters: 100\ntraffic_pattern:\n  matrix_file: /data/m.txt\n' },
    logs: { 'kvbench-ct-task0.log': 'kvbench-task0.log' },
    expect: [row('TOTAL_LATENCY_S', 1.873302), row('AVG_LATENCY_PER_ITER_S', 0.018733), row('TOTAL_SIZE_GB', 0.805306)],
  },
  golden_kvbench_sequential: {
    config: { ...base, benchmark: { kind: 'kvbench', ranks: 4, backend: 'ucx' }, kvbench: { script: '/opt/nixl/benchmark/kvbench/main.py', command: 'sequential-ct-perftest', config_file: 'seq.yaml' } },
    beside: { 'seq.yaml': 'traffic_patterns:\n  - matrix_file: /data/a.txt\n  - matrix_file: /data/b.txt\n' },
    logs: { 'kvbench-sequential.json': 'kvbench.json' },
    expect: [
      row('LATENCY_MS', 41.27304077148438, { pattern: 0, iteration: 1 }),
      row('LATENCY_MS', 28.3050537109375, { pattern: 1, iteration: 2 }),
      row('MEAN_BW_GBPS', 8.117203, { pattern: 0, iteration: 2 }),
      row('ISOLATED_LATENCY_MS', 22.41349220275879, { pattern: 1 }),
      row('TRANSFER_SIZE_GB', 0.402653184, { pattern: 0 }),
      // rank 0's own end of its last pattern (null where it sent nothing), as kvbench records it, minus the iteration's start
      row('WORKLOAD_LATENCY_MS', (1757672467.1432731 - 1757672467.0) * 1000, { iteration: 1 }),
    ],
  },
  golden_nixl_ep_data: {
    config: { ...base, benchmark: { kind: 'nixl-ep-perf', ranks: 1, nodes: 1, backend: 'ucx' }, nixl_ep_perf: { dir: '/opt/nixl/test/python/nixl_ep_perf', plane: 'data', processes_per_node: 8, mode: 'e2e', tokens: 128, hidden: 7168, experts_per_rank: 36, topk: 8 } },
    logs: { 'nixl-ep-data-e2e.log': 'nixl-ep-perf.log' },
    expect: [
      row('RANKS_PASSED', 8, { mode: 'e2e', experts_per_rank: 36 }),
      row('BW_GBPS_AVG', 41.52, { mode: 'e2e', experts_per_rank: 36 }),
      row('BW_GBPS_MIN', 41.37, { mode: 'e2e', experts_per_rank: 36 }),
      row('LAT_US_AVG', 537.8, { mode: 'e2e', experts_per_rank: 36 }),
      row('LAT_US_MAX', 539.7, { mode: 'e2e', experts_per_rank: 36 }),
    ],
  },
  golden_nixl_ep_cycle: {
    config: { ...base, benchmark: { kind: 'nixl-ep-perf', ranks: 1, nodes: 1, backend: 'ucx' }, nixl_ep_perf: { dir: '/opt/nixl/test/python/nixl_ep_perf', plane: 'control', processes_per_node: 8 } },
    logs: { 'nixl-ep-control-cycle.log': 'nixl-ep-perf.log' },
    expect: [
      row('CP_AVG_MS', 2791.06, { operation: 'connect', experts_per_rank: 8 }),
      row('CP_MAX_MS', 44.02, { operation: 'disconnect', experts_per_rank: 32 }),
      row('CP_TOTAL_MS', 1184.52 + 2791.06 + 41.37 + 2803.44 + 903.18, { experts_per_rank: 8 }),
      row('CP_TOTAL_MS', 1422.9 + 3012.75 + 44.02 + 3020.61 + 1130.33, { experts_per_rank: 32 }),
    ],
  },
  golden_nixl_ep_connect: {
    config: { ...base, benchmark: { kind: 'nixl-ep-perf', ranks: 1, nodes: 1, backend: 'ucx' }, nixl_ep_perf: { dir: '/opt/nixl/test/python/nixl_ep_perf', plane: 'control', processes_per_node: 8, test: 'connect' } },
    logs: { 'nixl-ep-control-connect.log': 'nixl-ep-perf.log' },
    expect: [
      row('CP_AVG_MS', 2812.4, { operation: 'connect', experts_per_rank: 8, across: 'ranks' }),
      row('CP_MIN_MS', 2790.11, { operation: 'connect', experts_per_rank: 8, across: 'ranks' }),
      row('CP_MAX_MS', 3069.2, { operation: 'connect', experts_per_rank: 32, across: 'ranks' }),
    ],
  },
  golden_lmcache_cache_engine: {
    config: { ...base, benchmark: { kind: 'lmcache', ranks: 2, backend: 'ucx' }, lmcache: { script: '/opt/LMCache/tests/disagg/test_nixl_cache_engine.py', num_chunks: 500, num_rounds: 2 } },
    logs: { 'lmcache-cache-engine-task0.log': 'lmcache-task0.log', 'lmcache-cache-engine-task1.log': 'lmcache-task1.log' },
    expect: [
      row('STORE_TIME_S', 0.217806, { round: 1 }),
      row('STORE_TIME_S', 0.247902, { round: 2 }),
      ...lmcacheRate('THROUGHPUT', 73.46, { round: 1 }),
      ...lmcacheRate('THROUGHPUT', 64.54, { round: 2 }),
      row('RETRIEVE_TIME_S', 0.421877, { round: 2 }),
      ...lmcacheRate('RETRIEVAL_THROUGHPUT', 37.11, { round: 1 }),
      ...lmcacheRate('RETRIEVAL_THROUGHPUT', 37.93, { round: 2 }),
      ...lmcacheRate('MEAN_THROUGHPUT', 69.0),
      ...lmcacheRate('THROUGHPUT_STD', 4.46),
      ...lmcacheRate('MIN_THROUGHPUT', 64.54),
      ...lmcacheRate('MAX_THROUGHPUT', 73.46),
      row('VERIFIED_ROUNDS', 2),
    ],
  },
  golden_lmcache_pipe_v2: {
    config: { ...base, benchmark: { kind: 'lmcache', ranks: 2, backend: 'ucx' }, lmcache: { script: '/opt/LMCache/tests/disagg/test_nixl_pipe_v2.py', num_objs: 500, num_rounds: 2, simulate_work: true } },
    logs: { 'lmcache-pipe-v2-task0.log': 'lmcache-task0.log', 'lmcache-pipe-v2-task1.log': 'lmcache-task1.log' },
    expect: [
      row('TRANSFER_TIME_S', 3.802113, { round: 1, side: 'sender' }),
      ...lmcacheRate('TRANSFER_THROUGHPUT', 4.21, { round: 1, side: 'sender' }),
      ...lmcacheRate('TRANSFER_THROUGHPUT', 4.3, { round: 2, side: 'sender' }),
      ...lmcacheRate('TRANSFER_THROUGHPUT', 4.06, { round: 1, side: 'receiver' }),
      ...lmcacheRate('TRANSFER_THROUGHPUT', 4.15, { round: 2, side: 'receiver' }),
      ...lmcacheRate('AVG_THROUGHPUT', 4.25, { rounds: 2, side: 'sender' }),
      ...lmcacheRate('AVG_THROUGHPUT', 4.1, { rounds: 2, side: 'receiver' }),
      row('VERIFIED_ROUNDS', 2),
    ],
  },
};

/** CSV lines split into cells (quoted cells may hold commas and doubled quotes). */
function csvCells(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted && c === '"' && line[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

describe('golden logs of the NIXL-era tools: their values come out by name, in results.json and the CSV', () => {
  it('replays each log through the nixl project (DEBUG_MODE=1)', async () => {
    const workDir = path.join(scratch, 'work');
    const outputPath = path.join(scratch, 'out');
    const configDir = path.join(workDir, 'test_configs/nixl/perf');
    mkdirSync(configDir, { recursive: true });
    Object.entries(cases).forEach(([stem, c], i) => {
      writeFileSync(path.join(configDir, `${stem}.yaml`), stringify(c.config));
      for (const [file, text] of Object.entries(c.beside ?? {})) writeFileSync(path.join(configDir, file), text);
      const logDir = path.join(outputPath, 'slurm_logs', `nixl_perf_${stem}`);
      mkdirSync(logDir, { recursive: true });
      for (const [fixture, name] of Object.entries(c.logs)) copyFileSync(path.join(golden, fixture), path.join(logDir, name));
      writeFileSync(path.join(logDir, `slurm-${9300 + i}.out`), '');
    });

    const run = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { DEBUG_MODE: '1', GPU_TYPE: undefined }, timeoutMs: 240_000 });
    const [header, ...lines] = readFileSync(path.join(outputPath, PERF_CSV_FILE), 'utf8').trimEnd().split('\n');
    const columns = csvCells(header);
    const rows = lines.map(csvCells).map((cells) => Object.fromEntries(columns.map((name, i) => [name, cells[i]])));
    for (const [stem, c] of Object.entries(cases)) {
      const id = `nixl_perf_${stem}`;
      const record = run.records.find((r: TestRecord) => r.testId === id);
      expect(record?.verdict, `${id}: ${JSON.stringify(record?.failures)}\n${run.output.slice(-3000)}`).toBe('passed');
      for (const want of c.expect) {
        const what = `${id} ${want.name} ${JSON.stringify(want.labels ?? {})}`;
        const labelsMatch = (labels: Labels) => Object.entries(want.labels ?? {}).every(([k, v]) => labels[k] === v) && Object.keys(labels).length === Object.keys(want.labels ?? {}).length;
        const json = record!.metrics.filter((m) => m.name === want.name && labelsMatch(m.labels));
        expect(json.map((m) => m.value), `results.json ${what}`).toHaveLength(1);
        expect(close(json[0].value, want.value), `results.json ${what}: ${json[0].value} vs ${want.value}`).toBe(true);
        // the CSV row: the test's name with the labels, the value in perf_metric, the metric's name in metric_type
        const suffix = Object.entries(want.labels ?? {}).map(([k, v]) => `_${k}:${v}`).join('');
        const csv = rows.filter((r) => r.metric_type === want.name && r.perf_case_name.includes(id) && r.perf_case_name.endsWith(suffix) && (suffix !== '' || !r.perf_case_name.replace(id, '').includes(':')));
        expect(csv.map((r) => r.perf_case_name), `CSV ${what}`).toHaveLength(1);
        expect(close(Number(csv[0].perf_metric), want.value), `CSV ${what}: ${csv[0].perf_metric} vs ${want.value}`).toBe(true);
      }
    }
  }, 300_000);
});
