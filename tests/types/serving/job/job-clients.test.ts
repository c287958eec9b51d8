// The benchmark client the job runs, as upstream picks it: use_nv_sa_benchmark runs the built-in SA
// mode with run_benchmark_nv_sa.sh's arguments; commands.client: aiperf runs run_benchmark_aiperf.sh's
// `aiperf profile` on the listed concurrencies; and what the job does with upstream's
// `<container_mount>` and with the GPU type's sbatch arguments.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { disaggType } from '../../../../framework/types/disagg.ts';
import { servingMetricSpecs, disaggPerfMetrics, wideepPerfMetrics } from '../../../../framework/types/serving/metrics.ts';
import { benchmarkClient, effectiveConcurrencies, servingConfig } from '../../../../framework/types/serving/serving-config.ts';
import { baseConfig, type Json } from '../../../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../../../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'job-clients-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;

async function build(config: Json, gpuType?: string) {
  const logDir = path.join(scratch, 'out', 'slurm_logs', `t${++folders}`);
  const built = await disaggType.buildJob({ testId: 'disagg_perf_t', category: 'perf', config, logDir, workDir: '/work', packageRoot: root, gpuType });
  return { built, logDir, script: readFileSync(path.join(logDir, 'job.sh'), 'utf8') };
}

/** The client words of the job's first benchmark step, unquoted. */
const clientLine = (script: string) => script.split('\n').find((l) => l.startsWith("run_step 'client")) ?? '';

describe('use_nv_sa_benchmark: true', () => {
  const sa = baseConfig({
    hardware: { num_gen_servers: 2 },
    benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8, concurrency_list: '4 8', multi_round: 8, input_length: 1024, output_length: 512 },
  });

  test('runs serve-bench in SA mode with run_benchmark_nv_sa.sh\'s arguments, concurrency x gen servers, prompts x multi_round', async () => {
    expect(benchmarkClient(servingConfig(sa))).toBe('nv-sa');
    const { script } = await build(sa);
    const line = clientLine(script);
    for (const arg of [
      'serve-bench', '--nv-sa', '--random-input-len 1024', '--random-output-len 512', '--random-range-ratio 0.8',
      '--ignore-eos', '--use-chat-template', '--max-concurrency 8', '--num-prompts 64', '--percentile-metrics ttft,tpot,itl,e2el',
    ]) expect(line, arg).toContain(arg);
    // The markers of both runs: 4 and 8 per generation server, two of them.
    expect(script).toContain('Benchmarking with concurrency');
    expect(effectiveConcurrencies(servingConfig(sa))).toEqual([8, 16]);
  });

  test('its results are read from 6_bench.log like benchmark_serving\'s', () => {
    expect(servingMetricSpecs(disaggPerfMetrics)(sa, 'perf')).toEqual([
      { logFile: '6_bench.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL', 'SERVER_FAILED_REQUESTS', 'SERVER_SUCCESSFUL_REQUESTS'],
        optionalNames: ['SERVER_OUTPUT_TOKEN_THROUGHPUT', 'SERVER_TOTAL_TOKEN_THROUGHPUT', 'SERVER_MEAN_AVG_DECODED_TOKENS_PER_ITER'] },
    ]);
  });
});

describe('commands.client: aiperf', () => {
  const aiperf = baseConfig({
    hardware: { num_gen_servers: 2 },
    benchmark: { concurrency_list: '4 8', multi_round: 3, dataset_file: '/data/trace.jsonl' },
    commands: { client: 'aiperf' },
  });

  test('runs `aiperf profile` as run_benchmark_aiperf.sh does: listed concurrencies, the trace, 20 min a round', async () => {
    const { script, logDir } = await build(aiperf);
    const line = clientLine(script);
    for (const arg of [
      'aiperf profile', '--input-file /data/trace.jsonl', '--custom-dataset-type mooncake_trace', '--concurrency 4',
      '--request-count 12', '--benchmark-duration 3600', '--extra-inputs ignore_eos:true', '--endpoint-type chat',
    ]) expect(line, arg).toContain(arg);
    expect(line).toContain(`--artifact-dir ${path.join(logDir, 'concurrency_4')}`);
    // Not multiplied by num_gen_servers, unlike the other clients.
    expect(effectiveConcurrencies(servingConfig(aiperf))).toEqual([4, 8]);
  });

  test('its results come from the JSON summaries; wideep expects no ITL from it (aiperf has none of that definition)', () => {
    const [spec] = servingMetricSpecs(wideepPerfMetrics)(aiperf, 'perf');
    expect(spec).toMatchObject({ logFile: 'concurrency_*/**/profile_export_aiperf.json', extractor: 'aiperf' });
    expect(spec.names).toContain('SERVER_P99_TPOT');
    expect(spec.names!.some((n) => n.endsWith('_ITL'))).toBe(false);
  });
});

describe('upstream\'s <container_mount> and GPU types', () => {
  test('<container_mount> with an image: the folders the job uses, mounted at the same path (Kimi-K2 also gets /dev/shm)', async () => {
    const config = baseConfig({
      metadata: { model_name: 'kimi-k2-thinking-fp4' },
      environment: { container_image: 'nvcr.io/trtllm:1', container_mount: '<container_mount>', model_path: '/models/Kimi-K2' },
      benchmark: { dataset_file: '/datasets/k2.json' },
    });
    const { script, logDir } = await build(config);
    const output = path.dirname(path.dirname(logDir));
    expect(script).toContain(`--container-mounts=/work:/work,${root}:${root},/models:/models,${output}:${output},/datasets:/datasets,tmpfs:/dev/shm:size=640G`);
  });

  test('the GPU type\'s extra_args and --segment replace the config\'s, as upstream\'s config_loader does (GB300: no --gres, --segment), with a note; use_gpu_type_args: false keeps the config\'s', async () => {
    const none = await build(baseConfig(), 'GB300');
    expect(none.built.resources.extraArgs).toEqual([`--segment=${none.built.resources.nodes}`]);
    expect(none.built.notes).toBeUndefined();
    const gb200 = await build(baseConfig(), 'GB200');
    expect(gb200.built.resources.extraArgs).toEqual(['--gres=gpu:4', `--segment=${gb200.built.resources.nodes}`]);
    const own = await build(baseConfig({ slurm: { extra_args: '--gres=gpu:4', set_segment: false } }), 'GB300');
    expect(own.built.resources.extraArgs).toEqual([`--segment=${own.built.resources.nodes}`]);
    expect(own.built.resources.gpusPerNode).toBe(4);
    expect(own.built.notes).toEqual([
      "slurm.extra_args '--gres=gpu:4' replaced by GB300's none, as upstream's config_loader does (slurm.use_gpu_type_args: false keeps the config's)",
      "slurm.set_segment false replaced by GB300's true, as upstream's config_loader does (slurm.use_gpu_type_args: false keeps the config's)",
    ]);
    // GB200_LYRIS has its own entry upstream: no --gres, --segment; a type without one (H200): nothing.
    expect((await build(baseConfig({ slurm: { extra_args: '--gres=gpu:4' } }), 'GB200_LYRIS')).built.resources.extraArgs).toEqual([expect.stringMatching(/^--segment=/)]);
    const h200 = await build(baseConfig({ slurm: { extra_args: '--gres=gpu:8 --reservation=r', set_segment: true } }), 'H200');
    expect(h200.built.resources.extraArgs).toEqual([]);
    expect(h200.built.notes).toHaveLength(2);
    const kept = await build(baseConfig({ slurm: { extra_args: '--gres=gpu:4 --reservation=r', set_segment: 2, use_gpu_type_args: false } }), 'GB300');
    expect(kept.built.resources.extraArgs).toEqual(['--gres=gpu:4', '--reservation=r', '--segment=2']);
    expect(kept.built.notes).toBeUndefined();
  });
});
