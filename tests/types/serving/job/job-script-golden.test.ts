// Golden serving jobs: every config under test_configs/disagg/ and test_configs/wideep/, and
// variants of a small config that reach every branch of the job builder (direct launcher, a
// container with derived and given mounts, nsys and numactl, mpi off, accuracy, secrets, the
// exact-shape warm-up with a dataset, the modes, several servers per node, every client), each
// rendered with fixed paths into every file the job writes (job.sh, env_vars.json,
// allocations.json, the configs) and the sbatch arguments it is submitted with. The golden file
// was written by the job builder as it was before the launchers were separated from it; a
// refactor must leave every byte in place. (A new example or option changes the file: rerun with
// `-u` and review the diff.)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { planServingJob } from '../../../../framework/types/serving/job/job-plan.ts';
import { jobArtefacts, jobResources } from '../../../../framework/types/serving/job/job-builder.ts';
import { servingConfig } from '../../../../framework/types/serving/serving-config.ts';
import { sbatchArgs } from '../../../../framework/scheduler/slurm.ts';
import { baseConfig, type Json } from '../../../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../../../..');
// The fixed functions every job.sh carries, shown once by name: they are the same text in every job.
const prelude = readFileSync(path.join(root, 'framework/types/serving/job/job-prelude.sh'), 'utf8').trimEnd();
const PACKAGE_ROOT = '/pkg';
const WORK_DIR = '/work';

function configFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) return configFiles(file);
      return /\.ya?ml$/.test(e.name) ? [file] : [];
    })
    .sort();
}

const examples: [name: string, config: Json][] = ['disagg', 'wideep'].flatMap((type) =>
  configFiles(path.join(root, 'test_configs', type)).map(
    (file): [string, Json] => [path.relative(path.join(root, 'test_configs'), file), parse(readFileSync(file, 'utf8')) as Json],
  ),
);

const small = { benchmark: { concurrency_list: '1 2' } };

/** Variants of the small config, each reaching a branch the examples may not. */
const variants: [name: string, config: Json][] = [
  ['base', baseConfig()],
  ['direct', baseConfig({ ...small, launch: { launcher: 'direct', base_port: 9000, router_port: 9100, health_timeout_s: 60, health_interval_s: 2 } })],
  ['container-derived-mounts', baseConfig({ ...small, environment: { container_image: '/images/trtllm.sqsh', container_mount: '<container_mount>', model_path: '/models/Kimi-K2-Thinking' }, benchmark: { concurrency_list: '4', dataset_file: '/data/set.jsonl' } })],
  ['container-given-mounts', baseConfig({ ...small, environment: { container_image: 'nvcr.io/x:1', container_mount: '/a:/a,/b:/b' }, launch: { container_name: 'mine' } })],
  ['container-direct', baseConfig({ ...small, environment: { container_image: 'nvcr.io/x:1' }, launch: { launcher: 'direct' } })],
  ['nsys-numa', baseConfig({ ...small, slurm: { numa_bind: true }, profiling: { nsys_on: true, gen_profile_range: '100-120' }, launch: { numa_command: 'numactl --cpunodebind=0' } })],
  ['mpi-off', baseConfig({ ...small, launch: { mpi: null } })],
  ['mpi-pmi2', baseConfig({ ...small, launch: { mpi: 'pmi2' } })],
  ['env-and-secrets', baseConfig({
    ...small,
    environment: {
      worker_env_var: 'TLLM_LOG_LEVEL=INFO HF_TOKEN=hf_one',
      ctx_worker_env_var: { UCX_TLS: 'rc,cuda_copy' },
      gen_worker_env_var: 'HF_TOKEN=hf_two',
      server_env_var: 'ROUTER_X=1',
    },
    benchmark: { env_var: 'CLIENT_Y="a b"' },
  })],
  ['accuracy', baseConfig({
    benchmark: { enable_benchmark: false },
    accuracy: {
      enable_accuracy_test: true, env_var: { HF_HOME: '/hf' },
      tasks: { gsm8k: { model: 'local-completions', model_args_extra: 'num_concurrent=8', extra_kwargs: { trust_remote_code: true, limit: 5, skip: false } } },
    },
  })],
  ['exact-warmup-dataset', baseConfig({ benchmark: { concurrency_list: '2 4', exact_warmup_rounds: 2, dataset_file: '/data/set.jsonl', multi_round: 2 } })],
  ['exact-warmup-random', baseConfig({ benchmark: { concurrency_list: '2', exact_warmup_rounds: 1 } })],
  ['gen-only', baseConfig({ benchmark: { mode: 'gen_only', concurrency_list: '8 16' } })],
  ['gen-only-no-context', baseConfig({ benchmark: { mode: 'gen_only_no_context', concurrency_list: '8' }, hardware: { num_ctx_servers: 0 } })],
  ['shared-nodes', baseConfig({
    ...small,
    hardware: { gpus_per_node: 4, num_ctx_servers: 2, num_gen_servers: 2 },
    worker_config: { gen: { tensor_parallel_size: 2 }, ctx: { tensor_parallel_size: 1 } },
  })],
  ['multi-node', baseConfig({ ...small, worker_config: { gen: { tensor_parallel_size: 8 } } })],
  ['client-serve-bench', baseConfig({ ...small, commands: { client: 'serve-bench' } })],
  ['client-nv-sa', baseConfig({ ...small, benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8 } })],
  ['client-aiperf', baseConfig({ ...small, commands: { client: 'aiperf' }, benchmark: { dataset_file: '/data/trace.jsonl' } })],
  ['own-commands', baseConfig({
    ...small,
    commands: { worker: ['my-server', '--port', '{port}', '--role', '{role}'], router: 'my-router --config {config}', client: 'my-client --url {base_url} -c {concurrency}', warmup: 'serve-bench' },
  })],
  ['job-name', baseConfig({ ...small, slurm: { job_name: "x; rm -rf / 'quoted'", partition: 'batch', account: 'acct', extra_args: '--exclusive --qos=high', set_segment: 2, use_gpu_type_args: false } })],
];

const GB200 = { name: 'GB200', slurmExtraArgs: '--gres=gpu:4', setSegment: true };

function rendered(name: string, raw: Json): string {
  const config = servingConfig(raw);
  const testId = `disagg_${name.replace(/[^A-Za-z0-9]+/g, '_')}`;
  const logDir = `/out/slurm_logs/${testId}`;
  const plan = planServingJob({ testId, config, logDir, packageRoot: PACKAGE_ROOT, workDir: WORK_DIR });
  const files = jobArtefacts(config, plan);
  const submit = (gpu?: typeof GB200) => {
    const { resources, notes } = jobResources(config, plan.allocation, gpu);
    const args = sbatchArgs({ name: testId, scriptPath: `${logDir}/job.sh`, logDir, workDir: WORK_DIR, resources });
    return [`sbatch${gpu ? ` (${gpu.name})` : ''}: ${JSON.stringify(args)}`, ...notes.map((n) => `note: ${n}`)];
  };
  return [
    `===== ${name}`,
    `unresolved: ${JSON.stringify(plan.unresolved)}`,
    `job env: ${JSON.stringify(plan.jobEnv)}`,
    ...submit(),
    ...submit(GB200),
    ...Object.keys(files).sort().map((file) => `--- ${file}\n${files[file].split(prelude).join('<job-prelude.sh>')}`),
  ].join('\n');
}

describe('serving jobs (golden)', () => {
  it('every example config and every variant build the job and sbatch arguments they built before', async () => {
    const all = [...examples, ...variants].map(([name, config]) => rendered(name, config));
    await expect(`${all.join('\n')}\n`).toMatchFileSnapshot('__golden__/serving-jobs.txt');
  });
});
