// An upstream-style SA config (benchmark.use_nv_sa_benchmark: true, no client command of its own)
// end to end through the framework on the real local SLURM cluster: the job runs the built-in SA
// mode (serve-bench --nv-sa with run_benchmark_nv_sa.sh's arguments), 6_bench.log holds the SA
// block and `Total failed requests: N` per concurrency, and the CSV gets the default metrics. The
// servers are STAND-INS (tests/fixtures/standin-openai-server.ts; the serving engine cannot run
// here): their numbers are fixture output, checked for presence and counts, never reported.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { baseConfig } from '../fixtures/serving/base-config.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { recordOf, removeWorkDirs, repoRoot, runSuite, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';
import { PERF_CSV_COLUMNS } from '../../framework/results/csv.ts';

afterAll(removeWorkDirs);

const standin = [path.join(repoRoot, 'node_modules/.bin/tsx'), path.join(repoRoot, 'tests/fixtures/standin-openai-server.ts'), '--host', '{host}', '--port', '{port}', '--model', '{model}'];
/** One task per GPU in each server step; as trtllm-llmapi-launch does, only rank 0 serves. */
const rank0 = ['bash', '-c', 'if [ "${SLURM_PROCID:-0}" = 0 ]; then exec "$@"; else exec sleep 100000; fi', 'rank0'];

describeCluster('an SA config through the framework', () => {
  it('use_nv_sa_benchmark: true runs the built-in SA client; its rows reach the CSV', async () => {
    const config = baseConfig({
      slurm: { partition: 'debug', job_time: '00:05:00', numa_bind: false, set_segment: false, use_gpu_type_args: false },
      hardware: { gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 2 },
      benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.5, multi_round: 2, concurrency_list: '1 2', input_length: 16, output_length: 8 },
      worker_config: { gen: { max_seq_len: 64 }, ctx: { max_seq_len: 32 } },
      // Only the serving engine is replaced; the client is the config's own choice (SA). Its UCX
      // warm-up is TensorRT-LLM's benchmark_serving upstream, which is not here: serve-bench sends it.
      commands: { worker: [...rank0, ...standin, '--role', '{role}'], router: [...standin, '--role', 'gen'], warmup: 'serve-bench' },
      launch: { mpi: null, health_interval_s: 1, base_port: 15440, router_port: 15449 },
    });
    const { workDir, outputPath } = writeWorkDir({ sa_ctx1_gen2_standin: config }, 'serving-sa-suite-');
    const run = await runSuite({ workDir, outputPath, scheduler: 'slurm', env: { SLURM_CONF: clusterEnv().SLURM_CONF }, timeoutMs: 360_000 }); // a 3-node job may queue behind other tests' jobs
    expect(run.exitCode, run.output).toBe(0);
    const id = testIdOf('sa_ctx1_gen2_standin');

    // The SA client ran: its block (no Total/Failed requests lines), then the failed count line.
    const bench = readFileSync(path.join(outputPath, 'slurm_logs', id, '6_bench.log'), 'utf8');
    expect(bench).toContain('serve-bench (nv-sa)');
    expect(bench).not.toMatch(/^Total requests:/m);
    for (const c of [2, 4]) {
      expect(bench).toContain(`Benchmarking with concurrency ${c} ... ${c * 2} prompts`);
      const result = JSON.parse(readFileSync(path.join(outputPath, 'slurm_logs', id, `concurrency_${c}`, 'result.json'), 'utf8'));
      expect(result).toMatchObject({ nv_sa: true, random_range_ratio: 0.5, num_prompts: c * 2, completed: c * 2 });
      for (const len of result.requested_input_lens) expect(len >= 8 && len <= 16).toBe(true);
    }
    expect(bench.match(/^Total failed requests: 0$/gm)).toHaveLength(2);

    const record = recordOf(run.records, id);
    expect(record?.verdict).toBe('passed');
    const column = (name: string) => PERF_CSV_COLUMNS.indexOf(name as (typeof PERF_CSV_COLUMNS)[number]);
    const cells = run.csvRows.map((row) => row.split(','));
    for (const metric of ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL']) {
      const names = cells.filter((c) => c[column('metric_type')] === metric).map((c) => c[column('perf_case_name')]).sort();
      expect(names).toEqual([`test_benchmark[${id}]_con:2`, `test_benchmark[${id}]_con:4`]);
    }
  }, 420_000);
});
