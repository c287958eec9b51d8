// The serving end-to-end case through the whole framework on the real local SLURM cluster: a disagg
// config with 1 context and 2 generation servers runs as a test of `vitest --project disagg`; the
// CSV gets SERVER_MEDIAN_TTFT and SERVER_MEDIAN_E2EL for both concurrencies. The servers are
// STAND-INS (tests/fixtures/standin-openai-server.ts; the serving engine cannot run here): their
// numbers are fixture output, checked for presence, never reported.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { baseConfig } from '../fixtures/serving/base-config.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { recordOf, removeWorkDirs, repoRoot, runSuite, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';
import { PERF_CSV_COLUMNS } from '../../framework/results/csv.ts';
import { JOB_ENDED_FILE } from '../../framework/scheduler/log-folder.ts';

afterAll(removeWorkDirs);

// The job's working directory is the temporary WORK_DIR: tsx is named by its path.
const standin = [path.join(repoRoot, 'node_modules/.bin/tsx'), path.join(repoRoot, 'tests/fixtures/standin-openai-server.ts'), '--host', '{host}', '--port', '{port}', '--model', '{model}'];
/** One task per GPU in each server step; as trtllm-llmapi-launch does, only rank 0 serves. */
const rank0 = ['bash', '-c', 'if [ "${SLURM_PROCID:-0}" = 0 ]; then exec "$@"; else exec sleep 100000; fi', 'rank0'];

describeCluster('the serving job through the framework', () => {
  it('1 ctx + 2 gen servers: the CSV gets SERVER_MEDIAN_TTFT and SERVER_MEDIAN_E2EL at both concurrencies', async () => {
    const config = baseConfig({
      // GPU_TYPE=GB200's (the fixture's) --segment is one SLURM 22.05 does not know: the config's own args.
      slurm: { partition: 'debug', job_time: '00:05:00', numa_bind: false, set_segment: false, use_gpu_type_args: false },
      hardware: { gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 2 },
      benchmark: { concurrency_list: '1 2', multi_round: 2, input_length: 16, output_length: 8 },
      worker_config: { gen: { max_seq_len: 64 }, ctx: { max_seq_len: 32 } },
      commands: { worker: [...rank0, ...standin, '--role', '{role}'], router: [...standin, '--role', 'gen'], client: 'serve-bench' },
      launch: { mpi: null, health_interval_s: 1, base_port: 15340, router_port: 15349 },
    });
    const { workDir, outputPath } = writeWorkDir({ 'ctx1_gen2_standin': config }, 'serving-suite-');
    const run = await runSuite({ workDir, outputPath, scheduler: 'slurm', env: { SLURM_CONF: clusterEnv().SLURM_CONF }, timeoutMs: 360_000 }); // a 3-node job may queue behind other tests' jobs
    expect(run.exitCode, run.output).toBe(0);
    const id = testIdOf('ctx1_gen2_standin');
    const column = (name: string) => PERF_CSV_COLUMNS.indexOf(name as (typeof PERF_CSV_COLUMNS)[number]);
    const cells = run.csvRows.map((row) => row.split(','));
    for (const metric of ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL']) {
      // Concurrencies 1 and 2 per generation server, two generation servers: 2 and 4.
      const names = cells.filter((c) => c[column('metric_type')] === metric).map((c) => c[column('perf_case_name')]).sort();
      expect(names).toEqual([`test_benchmark[${id}]_con:2`, `test_benchmark[${id}]_con:4`]);
      for (const c of cells.filter((c) => c[column('metric_type')] === metric)) expect(Number(c[column('perf_metric')])).toBeGreaterThan(0);
    }
    // Full precision: the record holds serve-bench's unrounded median TTFT from its result.json,
    // the CSV the 2-decimal print, as upstream's parser reads it from the log.
    const saved = JSON.parse(readFileSync(path.join(outputPath, 'slurm_logs', id, 'concurrency_2', 'result.json'), 'utf8'));
    const ttft = recordOf(run.records, id)?.metrics.find((m) => m.name === 'SERVER_MEDIAN_TTFT' && m.labels.concurrency === 2);
    expect(ttft).toMatchObject({ value: saved.median_ttft_ms, printed: Number(saved.median_ttft_ms.toFixed(2)), source: 'concurrency_2/result.json median_ttft_ms' });
    expect(ttft).not.toHaveProperty('rounded');
    const row = cells.find((c) => c[column('metric_type')] === 'SERVER_MEDIAN_TTFT' && c[column('perf_case_name')].endsWith('_con:2'))!;
    expect(Number(row[column('perf_metric')])).toBe(ttft!.printed);
    // The job's script marked its end (what the run's watcher polls on): its exit status.
    expect(readFileSync(path.join(outputPath, 'slurm_logs', id, JOB_ENDED_FILE), 'utf8')).toBe('0\n');
  }, 420_000);
});
