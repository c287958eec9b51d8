// The disaggregated-serving job builder: allocation math for the reference's shapes, the
// artefacts it writes, the sbatch resources, and quoting (every generated script passes bash -n
// and no config value turns into shell syntax).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import fg from 'fast-glob';
import { parse } from 'yaml';
import { afterAll, describe, expect, test } from 'vitest';
import { allocate } from '../../../../framework/types/serving/job/allocation.ts';
import { buildServingJob, UnresolvedPlaceholderError } from '../../../../framework/types/serving/job/job-builder.ts';
import { planServingJob } from '../../../../framework/types/serving/job/job-plan.ts';
import { servingConfig } from '../../../../framework/types/serving/serving-config.ts';
import { disaggType } from '../../../../framework/types/disagg.ts';
import { baseConfig, type Json } from '../../../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../../../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'job-builder-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;

async function build(config: Json, gpuType?: string) {
  const logDir = path.join(scratch, `job ${++folders}`);
  const built = await disaggType.buildJob({ testId: 'disagg_perf_t', category: 'perf', config, logDir, workDir: root, packageRoot: root, gpuType });
  const read = (name: string) => readFileSync(path.join(logDir, name), 'utf8');
  return { built, logDir, read, script: read('job.sh') };
}

function bashSyntaxOk(file: string): void {
  execFileSync('bash', ['-n', file], { stdio: 'pipe' });
}

const ctx1gen1tp16 = baseConfig({
  hardware: { gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 1 },
  benchmark: { concurrency_list: '1 8 64' },
  worker_config: { ctx: { tensor_parallel_size: 16 }, gen: { tensor_parallel_size: 16, enable_attention_dp: false, max_batch_size: 64, max_num_tokens: 64 } },
});
const ctx2gen1dep16 = baseConfig({
  hardware: { gpus_per_node: 4, num_ctx_servers: 2, num_gen_servers: 1 },
  benchmark: { concurrency_list: '512 2048' },
  worker_config: { ctx: { tensor_parallel_size: 4 }, gen: { tensor_parallel_size: 16, enable_attention_dp: true, max_batch_size: 128, max_num_tokens: 128 } },
});
const genOnly = baseConfig({ benchmark: { mode: 'gen_only_no_context' }, hardware: { gpus_per_node: 4, num_ctx_servers: 0, num_gen_servers: 2 }, worker_config: { gen: { tensor_parallel_size: 8 } } });

describe('allocation', () => {
  test('ctx1/gen1 tp16 on 4-GPU nodes: 4 + 4 nodes, generation first', () => {
    const a = allocate(servingConfig(ctx1gen1tp16));
    expect([a.totalNodes, a.totalTasks, a.gen.nodes, a.ctx.nodes]).toEqual([8, 32, 4, 4]);
    expect(a.servers).toEqual([
      { role: 'GEN', index: 0, name: 'GEN_0', worldSize: 16, nodes: [0, 1, 2, 3], gpuIds: [0, 1, 2, 3], ntasksPerNode: 4, port: 8000 },
      { role: 'CTX', index: 0, name: 'CTX_0', worldSize: 16, nodes: [4, 5, 6, 7], gpuIds: [0, 1, 2, 3], ntasksPerNode: 4, port: 8001 },
    ]);
    expect(a.router).toEqual({ node: 0, port: 8333 });
  });

  test('ctx2/gen1 dep16: one node per context server, four for generation', () => {
    const a = allocate(servingConfig(ctx2gen1dep16));
    expect([a.totalNodes, a.totalTasks]).toEqual([6, 24]);
    expect(a.servers.map((s) => [s.name, s.nodes, s.gpuIds, s.port])).toEqual([
      ['GEN_0', [0, 1, 2, 3], [0, 1, 2, 3], 8000],
      ['CTX_0', [4], [0, 1, 2, 3], 8001],
      ['CTX_1', [5], [0, 1, 2, 3], 8002],
    ]);
  });

  test('gen_only_no_context starts no context server', () => {
    const a = allocate(servingConfig(genOnly));
    expect([a.totalNodes, a.ctx.servers, a.ctx.nodes]).toEqual([4, 0, 0]);
    expect(a.servers.map((s) => [s.name, s.nodes])).toEqual([['GEN_0', [0, 1]], ['GEN_1', [2, 3]]]);
  });

  test('gen_only still starts its context servers', () => {
    const a = allocate(servingConfig({ ...ctx2gen1dep16, benchmark: { ...(ctx2gen1dep16.benchmark as Json), mode: 'gen_only' } }));
    expect(a.servers.map((s) => s.name)).toEqual(['GEN_0', 'CTX_0', 'CTX_1']);
  });

  test('small servers share a node, each with its own GPUs; nodes = ceil(world * servers / gpus_per_node)', () => {
    const config = baseConfig({ hardware: { gpus_per_node: 8, num_ctx_servers: 3, num_gen_servers: 1 }, worker_config: { ctx: { tensor_parallel_size: 2, pipeline_parallel_size: 2 } } });
    const a = allocate(servingConfig(config));
    expect([a.gen.nodes, a.ctx.nodes, a.totalNodes, a.totalTasks]).toEqual([1, 2, 3, 24]);
    expect(a.servers.map((s) => [s.name, s.nodes, s.gpuIds])).toEqual([
      ['GEN_0', [0], [0, 1, 2, 3]],
      ['CTX_0', [1], [0, 1, 2, 3]],
      ['CTX_1', [1], [4, 5, 6, 7]],
      ['CTX_2', [2], [0, 1, 2, 3]],
    ]);
  });

  test('a server that would straddle nodes unevenly is refused', () => {
    expect(() => allocate(servingConfig(baseConfig({ worker_config: { gen: { tensor_parallel_size: 6 } } })))).toThrow(
      'GEN: a server of 6 GPUs neither fills whole nodes of 4 GPUs nor divides one',
    );
  });
});

describe('artefacts', () => {
  test('worker configs pass through untouched, the router config lists every server', async () => {
    const { read, built } = await build(ctx2gen1dep16);
    expect(parse(read('gen_config.yaml'))).toEqual((ctx2gen1dep16.worker_config as Json).gen);
    expect(parse(read('ctx_config.yaml'))).toEqual((ctx2gen1dep16.worker_config as Json).ctx);
    expect(parse(read('server_config.yaml'))).toEqual({
      hostname: '<node0>',
      port: 8333,
      backend: 'pytorch',
      context_servers: { num_instances: 2, urls: ['<node4>:8001', '<node5>:8002'] },
      generation_servers: { num_instances: 1, urls: ['<node0>:8000'] },
    });
    const allocations = JSON.parse(read('allocations.json'));
    expect(allocations).toMatchObject({ gpus_per_node: 4, total_nodes: 6, total_tasks: 24, router: { host: '<node0>', port: 8333 } });
    expect(allocations.servers[1]).toEqual({
      server_type: 'CTX', server_id: 0, name: 'CTX_0', port: 8001, world_size: 4, node_indices: [4], nodes: { '<node4>': [0, 1, 2, 3] }, ntasks_per_node: 4,
    });
    expect(statSync(built.scriptPath).mode & 0o111).not.toBe(0);
    bashSyntaxOk(built.scriptPath);
  });

  test('YAML anchors come out as plain copies in the worker configs', async () => {
    const file = 'test_configs/disagg/perf/deepseek-r1-fp4_1k1k_ctx2_gen1_dep16_bs128_eplb0_mtp3_ccb-UCX.yaml';
    const text = readFileSync(path.join(root, file), 'utf8');
    expect(text).toMatch(/&cache_transceiver/);
    const config = parse(text);
    Object.assign(config.environment, { model_path: '/m', container_image: '', container_mount: '' });
    config.benchmark.dataset_file = '/d.json';
    const { read } = await build(config);
    for (const name of ['ctx_config.yaml', 'gen_config.yaml']) {
      expect(read(name)).not.toMatch(/[&*](cache_transceiver|mtp)\b/);
    }
    expect(parse(read('ctx_config.yaml')).cache_transceiver_config).toEqual({ max_tokens_in_buffer: 4608, backend: 'UCX' });
    expect(parse(read('ctx_config.yaml')).speculative_config).toEqual({ decoding_type: 'MTP', num_nextn_predict_layers: 3 });
  });

  test('gen_only_no_context: no ctx server step, the engine switch exported, zero context servers in the router config', async () => {
    const { script, read } = await build(genOnly);
    expect(script).not.toMatch(/start_server CTX_/);
    expect(script).toMatch(/^export TRTLLM_DISAGG_BENCHMARK_GEN_ONLY=1$/m);
    expect(parse(read('server_config.yaml')).context_servers).toEqual({ num_instances: 0, urls: [] });
    expect(JSON.parse(read('env_vars.json')).job).toEqual({ TRTLLM_DISAGG_BENCHMARK_GEN_ONLY: '1' });
  });

  test('gen_only: TLLM_BENCHMARK_REQ_QUEUES_SIZE on the generation workers only (upstream submit.py build_worker_environment), the first listed concurrency, after the config\'s own', async () => {
    const config = baseConfig({
      benchmark: { mode: 'gen_only', concurrency_list: '16 32' },
      hardware: { gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 2 },
      environment: { gen_worker_env_var: 'TLLM_BENCHMARK_REQ_QUEUES_SIZE=999 G=1' },
      worker_config: { ctx: { tensor_parallel_size: 4 }, gen: { tensor_parallel_size: 4 } },
    });
    const { script, read } = await build(config);
    const env = JSON.parse(read('env_vars.json'));
    expect(env.GEN_0.TLLM_BENCHMARK_REQ_QUEUES_SIZE).toBe('16');
    expect(env.GEN_1.TLLM_BENCHMARK_REQ_QUEUES_SIZE).toBe('16');
    for (const step of ['CTX_0', 'ROUTER', 'job', 'client c=32']) expect(env[step], step).not.toHaveProperty('TLLM_BENCHMARK_REQ_QUEUES_SIZE');
    expect(env.job).toEqual({ TRTLLM_DISABLE_KV_CACHE_TRANSFER_OVERLAP: '1' });
    expect(script).not.toMatch(/^export TLLM_BENCHMARK_REQ_QUEUES_SIZE/m);
    const gen0 = script.split('\n').find((l) => l.startsWith("start_server GEN_0 "))!;
    expect(gen0).toMatch(/'TLLM_BENCHMARK_REQ_QUEUES_SIZE=999' 'G=1' .*'TLLM_BENCHMARK_REQ_QUEUES_SIZE=16'/);
    const ctx0 = script.split('\n').find((l) => l.startsWith("start_server CTX_0 "))!;
    expect(ctx0).not.toContain('TLLM_BENCHMARK_REQ_QUEUES_SIZE');
  });

  test('the job script: steps, logs, markers, ports and per-server environment', async () => {
    const config = baseConfig({
      environment: { worker_env_var: 'A=1 B="two words"', gen_worker_env_var: 'G=1', server_env_var: 'S=1', container_image: 'nvcr.io/x:1', container_mount: '/a:/a' },
      benchmark: { multi_round: 3 },
      hardware: { num_gen_servers: 2 },
      slurm: { numa_bind: true },
      profiling: { nsys_on: true },
    });
    const { script, read } = await build(config);
    const lines = script.split('\n');
    const step = (name: string) => lines.find((l) => l.startsWith(`start_server ${name} `))!;
    expect(step('GEN_1')).toContain(`srun --overlap --nodelist "\${GEN_1_NODES}" --nodes 1 --ntasks 4 --ntasks-per-node 4 '--mpi=pmix'`);
    expect(step('GEN_1')).toContain(`'--container-image=nvcr.io/x:1' '--container-name=disagg-bench' '--container-mounts=/a:/a' env 'A=1' 'B=two words' 'G=1' 'CUDA_VISIBLE_DEVICES=0,1,2,3'`);
    expect(step('GEN_1')).toMatch(/'TLLM_PROFILE_START_STOP=200-250' .* nsys profile .* numactl -m 0,1 trtllm-llmapi-launch trtllm-serve \/models\/DeepSeek-R1 --host "\$\{GEN_1_HOST\}" --port 8001 --extra_llm_api_options '.*\/gen_config.yaml'$/);
    expect(step('CTX_0')).toContain("'TLLM_PROFILE_START_STOP=10-30'");
    expect(step('CTX_0')).not.toContain("'G=1'");
    expect(step('CTX_0')).toContain('--port 8002');
    expect(step('ROUTER')).toMatch(/env 'S=1' trtllm-serve disaggregated -c '.*\/server_config.yaml' -t 1800 -r 1800$/);
    expect(step('ROUTER')).toContain(`4_output_server.log' srun --overlap --nodelist "\${ROUTER_NODE}" --nodes 1 --ntasks 1`);
    // Listed concurrencies are per generation server: the client runs (and the markers say) c * 2.
    expect(lines.filter((l) => l.startsWith('echo '))).toEqual([
      // e2e: upstream's UCX warm-up first (2 x ctx world 4 x gen world 4), then run_benchmark.sh's lines.
      expect.stringMatching(/^echo 'warming up ucx connections with small requests\.\.\. 32' >>'.*\/6_bench.log'$/),
      expect.stringMatching(/^echo 'UCX warmup done' >>/),
      expect.stringMatching(/^echo "Hostname: \$\{ROUTER_HOST\}, Port: 8333" >>/),
      expect.stringMatching(/^echo 'Starting benchmark\.\.\.' >>/),
      expect.stringMatching(/^echo 'Benchmarking with concurrency 2 \.\.\. 6 prompts' >>'.*\/6_bench.log'$/),
      expect.stringMatching(/^echo 'Benchmark with concurrency 2 done' >>/),
      expect.stringMatching(/^echo 'Benchmarking with concurrency 4 \.\.\. 12 prompts' >>/),
      expect.stringMatching(/^echo 'Benchmark with concurrency 4 done' >>/),
      expect.stringMatching(/^echo 'Benchmarking with concurrency 8 \.\.\. 24 prompts' >>/),
      expect.stringMatching(/^echo 'Benchmark with concurrency 8 done' >>/),
      expect.stringMatching(/^echo 'Benchmarking with concurrency 16 \.\.\. 48 prompts' >>/),
      expect.stringMatching(/^echo 'Benchmark with concurrency 16 done' >>/),
    ]);
    expect(script).toMatch(/run_step 'client c=16' '.*\/6_bench.log' srun .* python -m tensorrt_llm.serve.scripts.benchmark_serving --model \/models\/DeepSeek-R1 --backend openai --host "\$\{ROUTER_HOST\}" --port 8333 --dataset-name random .* --num-prompts 48 --max-concurrency 16 /);
    expect(script).toMatch(/^run_step container '.*\/1_container_launch.log' srun --nodes 3 --ntasks 3 --ntasks-per-node 1 /m);
    expect(script).toMatch(/^wait_for_health "\$\{ROUTER_URL\}\/health" '.*\/5_wait_server.log'$/m);
    expect(script).toMatch(/^date -Iseconds >'.*\/job_done.txt'$/m);
    expect(JSON.parse(read('env_vars.json')).GEN_0).toMatchObject({ A: '1', B: 'two words', G: '1', CUDA_VISIBLE_DEVICES: '0,1,2,3', TLLM_NVTX_DEBUG: '1' });
  });

  test('config secrets are not written: job.sh expands them from the job environment, env_vars.json redacts them', async () => {
    const config = baseConfig({
      environment: { worker_env_var: 'HF_TOKEN=hf_secret123 OTHER=1', gen_worker_env_var: 'HF_TOKEN=hf_gen456', server_env_var: 'WANDB_API_KEY=wk_789' },
      accuracy: { env_var: { OPENAI_API_KEY: 'sk-acc-1' } },
    });
    const { built, logDir, read, script } = await build(config);
    for (const name of fg.sync('**', { cwd: logDir })) {
      for (const secret of ['hf_secret123', 'hf_gen456', 'wk_789', 'sk-acc-1']) expect(read(name), `${secret} in ${name}`).not.toContain(secret);
    }
    bashSyntaxOk(path.join(logDir, 'job.sh'));
    // The same name set to another value by another step travels under its own variable.
    expect(built.env).toEqual({ HF_TOKEN: 'hf_secret123', DISAGG_SECRET_2_HF_TOKEN: 'hf_gen456', WANDB_API_KEY: 'wk_789' });
    const step = (name: string) => script.split('\n').find((l) => l.startsWith(`start_server ${name} `))!;
    expect(step('CTX_0')).toContain(`env 'HF_TOKEN='"\${HF_TOKEN}" 'OTHER=1' 'CUDA_VISIBLE_DEVICES=`);
    expect(step('GEN_0')).toContain(`env 'HF_TOKEN='"\${HF_TOKEN}" 'OTHER=1' 'HF_TOKEN='"\${DISAGG_SECRET_2_HF_TOKEN}" 'CUDA_VISIBLE_DEVICES=`);
    expect(step('ROUTER')).toContain(`env 'WANDB_API_KEY='"\${WANDB_API_KEY}" `);
    expect(script).toContain(`: "\${HF_TOKEN?must be set in the job environment`);
    const envVars = JSON.parse(read('env_vars.json'));
    expect(envVars.CTX_0).toMatchObject({ HF_TOKEN: '<redacted>', OTHER: '1' });
    expect(envVars.ROUTER).toEqual({ WANDB_API_KEY: '<redacted>' });
  });

  test('a config without secrets asks for no job environment', async () => {
    const { built, script } = await build(baseConfig({ environment: { worker_env_var: 'A=1' } }));
    expect(built.env).toBeUndefined();
    expect(script).not.toContain("must be set in the job environment");
  });

  test('no container image: no container flags and no container step', async () => {
    const { script } = await build(baseConfig({ environment: { container_image: '', container_mount: '/a:/a' } }));
    expect(script).not.toMatch(/--container-|1_container_launch/);
  });

  test('accuracy: one lm_eval run per task into 7_accuracy_eval_<task>.log, with its environment', async () => {
    const { script } = await build(baseConfig({
      metadata: { accuracy: { datasets: [{ dataset_name: 'gsm8k', expected_value: 0.9454 }] } },
      accuracy: { enable_accuracy_test: true, env_var: { HF_HOME: '/hf home' }, tasks: { gsm8k: { model_args_extra: 'num_concurrent=512', extra_kwargs: { trust_remote_code: true, limit: 10 } } } },
    }));
    const line = script.split('\n').find((l) => l.startsWith("run_step 'accuracy gsm8k'"))!;
    expect(line).toMatch(/7_accuracy_eval_gsm8k.log' srun .* env 'HF_HOME=\/hf home' lm_eval --model local-completions --tasks gsm8k --model_args 'model=\/models\/DeepSeek-R1,base_url='"\$\{ROUTER_URL\}"'\/v1\/completions,num_concurrent=512' --output_path '.*\/accuracy_eval_gsm8k' --log_samples --trust_remote_code --limit 10$/);
  });

  test('every example config and variant yields a script bash accepts', async () => {
    const files = fg.sync(['test_configs/{disagg,wideep}/**/*.yaml'], { cwd: root });
    expect(files.length).toBeGreaterThan(4);
    for (const file of files) {
      const config = parse(readFileSync(path.join(root, file), 'utf8'));
      Object.assign(config.environment, { model_path: '/m', container_image: 'img', container_mount: '/a:/b' });
      if (config.benchmark.dataset_file) config.benchmark.dataset_file = '/d.json';
      if (config.accuracy?.env_var) config.accuracy.env_var = { HF_HOME: '/hf' };
      for (const launch of [undefined, { launcher: 'direct', mpi: null }]) {
        const { built } = await build({ ...config, launch, profiling: { nsys_on: true } });
        bashSyntaxOk(built.scriptPath);
      }
    }
  });
});

describe('resources', () => {
  test('nodes, tasks, time, extra args and --segment from the config; partition and account as given (sbatch drops placeholders)', async () => {
    const config = { ...ctx2gen1dep16, slurm: { partition: '<partition>', account: 'acct', job_time: '1-02:03:04', extra_args: "--gres=gpu:4 --comment='a b'", set_segment: true } };
    const { built } = await build(config);
    expect(built.resources).toEqual({
      nodes: 6, ntasks: 24, ntasksPerNode: 4, gpusPerNode: undefined, timeLimitSec: 93_784, partition: '<partition>', account: 'acct',
      extraArgs: ['--gres=gpu:4', '--comment=a b', '--segment=6'],
    });
  });

  test("without extra_args the GPU type's defaults apply (GB200: --gres=gpu:4 and one segment)", async () => {
    expect((await build(ctx1gen1tp16, 'GB200')).built.resources).toMatchObject({ extraArgs: ['--gres=gpu:4', '--segment=8'], gpusPerNode: undefined });
    expect((await build(ctx1gen1tp16, 'H100')).built.resources).toMatchObject({ extraArgs: [], gpusPerNode: 4 });
    expect((await build({ ...ctx1gen1tp16, slurm: { ...(ctx1gen1tp16.slurm as Json), set_segment: 2 } })).built.resources.extraArgs).toEqual(['--segment=2']);
  });
});

describe('quoting', () => {
  const hostile = baseConfig({
    slurm: { job_name: 'x; rm -rf /' },
    environment: { model_path: `/models/it's "R1" $(touch PWNED) \`id\` $HOME; echo`, worker_env_var: 'X="$(touch PWNED2)"' },
  });

  test('hostile values appear only as quoted words', async () => {
    const { script, built } = await build(hostile);
    bashSyntaxOk(built.scriptPath);
    expect(script).toContain(`JOB_NAME='x; rm -rf /'`);
    expect(script).toContain(`'/models/it'\\''s "R1" $(touch PWNED) \`id\` $HOME; echo'`);
    expect(script).toContain(`'X=$(touch PWNED2)'`);
    // Outside those quoted words nothing of them is left.
    const rest = script.split(`'/models/it'\\''s "R1" $(touch PWNED) \`id\` $HOME; echo'`).join('').split(`'X=$(touch PWNED2)'`).join('').split(`'x; rm -rf /'`).join('');
    expect(rest).not.toMatch(/touch PWNED|rm -rf/);
  });

  test('bash reads each hostile value back as exactly one word, unexpanded', async () => {
    // Replace the worker by printf so bash itself shows the words it would pass.
    const { logDir } = await build({ ...hostile, commands: { worker: ['printf', '[%s]\\n', '{model}', 'tail'] } });
    const script = readFileSync(path.join(logDir, 'job.sh'), 'utf8');
    const line = script.split('\n').find((l) => l.startsWith('start_server GEN_0 '))!;
    const words = line.slice(line.indexOf(' printf ') + 1);
    const out = execFileSync('bash', ['-c', words], { cwd: scratch, encoding: 'utf8' });
    expect(out).toBe(`[/models/it's "R1" $(touch PWNED) \`id\` $HOME; echo]\n[tail]\n`);
    expect(fg.sync('PWNED*', { cwd: scratch })).toEqual([]);
  });

  test('a job that needs a placeholder value is not built, and the error names the variable', async () => {
    const config = baseConfig({ environment: { model_path: '<model_path>', container_image: '<container_image>' } });
    await expect(build(config)).rejects.toThrow(
      'the job cannot be built: environment.container_image is still <container_image> (set CONTAINER_IMAGE); environment.model_path is still <model_path> (set MODEL_DIR)',
    );
    const direct = path.join(scratch, 'direct');
    await expect(
      buildServingJob({ testId: 't', category: 'perf', config, logDir: direct, workDir: root, packageRoot: root, gpuType: undefined }),
    ).rejects.toBeInstanceOf(UnresolvedPlaceholderError);
  });

  test('a placeholder the job does not use is no obstacle', () => {
    const plan = planServingJob({ testId: 't', config: servingConfig(baseConfig({ environment: { work_dir: '<full_path_to_work_dir>' }, benchmark: { dataset_file: '<dataset_file>' }, commands: { client: 'serve-bench' } })), logDir: '/l', packageRoot: root });
    expect(plan.unresolved).toEqual([]);
  });
});
