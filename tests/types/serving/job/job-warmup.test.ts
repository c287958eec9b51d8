// the job sends upstream's warm-ups before measuring (framework/types/serving/job/warmup.ts):
// in e2e mode the UCX warm-up of run_benchmark.sh (ucx_warmup_requests = 2 x ctx world x gen
// world, 100-token prompts, 10 out, non-streaming) between its markers; with exact_warmup_rounds
// the exact-shape warm-up per concurrency (the client itself, concurrency x rounds prompts, the
// dataset's first rows; the measured run gets the next ones), as newer run_benchmark.sh does.
// The script is checked as built and, for the exact-shape warm-up, run for real (bash, stand-in
// servers, a client that reports what it was given).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { disaggType } from '../../../../framework/types/disagg.ts';
import { freePortRange } from '../../../../runners/common/free-port.ts';
import { baseConfig, type Json } from '../../../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../../../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'job-warmup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let jobs = 0;

async function build(config: Json) {
  const logDir = path.join(scratch, `job${++jobs}`);
  await disaggType.buildJob({ testId: 'disagg_perf_t', category: 'perf', config, logDir, workDir: root, packageRoot: root, gpuType: undefined });
  const script = readFileSync(path.join(logDir, 'job.sh'), 'utf8');
  return { logDir, script, lines: script.split('\n') };
}

const issues = (config: Json) => disaggType.rules(config, { file: path.join(root, 'test_configs/disagg/perf/t.yaml') }).map((v) => `${v.path.join('.')}: ${v.message}`);
const ctx4gen16 = { hardware: { gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 1 }, benchmark: { concurrency_list: '8 16' }, worker_config: { ctx: { tensor_parallel_size: 4 }, gen: { tensor_parallel_size: 16, max_batch_size: 16, max_num_tokens: 16 } } };

describe('the UCX warm-up (e2e)', () => {
  test('2 x ctx world x gen world requests of benchmark_serving with run_benchmark.sh\'s arguments, between its markers, before the first measured run', async () => {
    const { lines } = await build(baseConfig(ctx4gen16));
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    const start = at("echo 'warming up ucx connections with small requests... 128'");
    const step = at("run_step 'ucx warmup'");
    const done = at("echo 'UCX warmup done'");
    const first = at("echo 'Benchmarking with concurrency 8 ... 8 prompts'");
    expect([start, step, done, first].every((i) => i > 0)).toBe(true);
    expect(start < step && step < done && done < first).toBe(true);
    for (const arg of [
      'python -m tensorrt_llm.serve.scripts.benchmark_serving', '--model /models/DeepSeek-R1', '--dataset-name random', '--random-ids',
      '--random-input-len 100', '--random-output-len 10', '--num-prompts 128', '--port 8333', '--ignore-eos', '--non-streaming', '--trust-remote-code',
    ]) expect(lines[step].replace(/'/g, '')).toContain(arg);
    expect(lines[step]).toMatch(/--host "\$\{ROUTER_HOST\}"/);
    // Upstream's lines between the warm-up and the first run.
    expect(lines.slice(done, first).join('\n')).toMatch(/Hostname: \$\{ROUTER_HOST\}, Port: 8333[\s\S]*Starting benchmark\.\.\./);
  });

  test('none in gen_only and gen_only_no_context (submit.py passes 0), none without a benchmark', async () => {
    for (const mode of ['gen_only', 'gen_only_no_context']) {
      const patch = mode === 'gen_only_no_context' ? { hardware: { num_ctx_servers: 0 } } : {};
      expect((await build(baseConfig({ ...patch, benchmark: { mode } }))).script, mode).not.toContain('warming up ucx');
    }
    expect((await build(baseConfig({ benchmark: { enable_benchmark: false } }))).script).not.toContain('ucx warmup');
  });

  test('the warm-up follows the client: serve-bench for serve-bench and a command of the config\'s own, benchmark_serving for upstream\'s clients; commands.warmup picks', async () => {
    const warmupLine = async (config: Json) => (await build(config)).lines.find((l) => l.startsWith("run_step 'ucx warmup'"))!;
    expect(await warmupLine(baseConfig({ commands: { client: 'serve-bench' } }))).toMatch(/bin\/disagg-bench\.js'? serve-bench .*--random-ids --random-input-len 100 --random-output-len 10 --num-prompts 32 --ignore-eos$/);
    expect(await warmupLine(baseConfig({ commands: { client: ['my-client', '{base_url}'] } }))).toContain(' serve-bench ');
    expect(await warmupLine(baseConfig({ benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8 } }))).toContain('tensorrt_llm.serve.scripts.benchmark_serving');
    expect(await warmupLine(baseConfig({ commands: { client: 'serve-bench', warmup: 'benchmark_serving' } }))).toContain('tensorrt_llm.serve.scripts.benchmark_serving');
    expect(await warmupLine(baseConfig({ commands: { warmup: ['warm', '{base_url}', '{num_prompts}'] } }))).toMatch(/warm "\$\{ROUTER_URL\}" 32$/);
    expect(issues(baseConfig({ commands: { warmup: 'warm {concurrency}' } }))).toEqual([expect.stringMatching(/^commands\.warmup: unknown placeholder \{concurrency\}/)]);
    // Outside e2e no warm-up is sent: a warm-up command there would be ignored, so it is refused.
    expect(issues(baseConfig({ benchmark: { mode: 'gen_only' }, commands: { warmup: 'serve-bench' } }))).toEqual([
      "commands.warmup: would never run: the UCX warm-up is sent in mode e2e only (upstream's submit.py passes 0 warm-up requests in mode gen_only); remove it",
    ]);
  });
});

describe('the exact-shape warm-up (exact_warmup_rounds)', () => {
  test('per concurrency: the client with concurrency x rounds prompts into warmup_concurrency_<c>/, on the dataset\'s first rows; the measured run on the next', async () => {
    const { lines, logDir } = await build(baseConfig({ ...ctx4gen16, benchmark: { ...ctx4gen16.benchmark, dataset_file: '/data/set.jsonl', exact_warmup_rounds: 2, multi_round: 3 } }));
    const datasets = path.join(logDir, 'request_datasets');
    expect(lines.filter((l) => l.startsWith('split_dataset '))).toEqual([8, 16].map((c) =>
      `split_dataset ${logDir}/6_bench.log /data/set.jsonl ${datasets}/warmup_concurrency_${c}.jsonl ${datasets}/measurement_concurrency_${c}.jsonl ${2 * c} ${3 * c}`));
    const warm = lines.find((l) => l.startsWith("run_step 'exact warmup c=16'"))!;
    expect(warm).toContain(`--dataset-path ${datasets}/warmup_concurrency_16.jsonl --num-prompts 32 --max-concurrency 16`);
    expect(warm).toContain(`--result-dir ${logDir}/warmup_concurrency_16 `);
    const measured = lines.find((l) => l.startsWith("run_step 'client c=16'"))!;
    expect(measured).toContain(`--dataset-path ${datasets}/measurement_concurrency_16.jsonl --num-prompts 48 --max-concurrency 16`);
    const order = ["echo 'Warming up exact request shape with concurrency 16 ... 32 prompts'", "run_step 'exact warmup c=16'", "echo 'Exact-shape warmup with concurrency 16 done'", "echo 'Benchmarking with concurrency 16 ... 48 prompts'"]
      .map((p) => lines.findIndex((l) => l.startsWith(p)));
    expect(order.every((i, k) => i > 0 && (k === 0 || i > order[k - 1]))).toBe(true);
  });

  test('without a dataset (random prompts) nothing is split; 0 rounds: no exact-shape warm-up', async () => {
    const random = await build(baseConfig({ benchmark: { exact_warmup_rounds: 1, concurrency_list: '4' } }));
    expect(random.lines.some((l) => l.startsWith('split_dataset '))).toBe(false);
    expect(random.lines.find((l) => l.startsWith("run_step 'exact warmup c=4'"))).toMatch(/--random-input-len 1024 .*--num-prompts 4 --max-concurrency 4/);
    expect((await build(baseConfig({ benchmark: { exact_warmup_rounds: 0 } }))).script).not.toContain('Warming up exact');
  });

  test('refused with the SA client and aiperf, whose scripts have no exact-shape warm-up', () => {
    expect(issues(baseConfig({ benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8, exact_warmup_rounds: 1 } }))).toEqual([
      "benchmark.exact_warmup_rounds: is not supported with the SA client: upstream's run_benchmark_nv_sa.sh has no exact-shape warm-up (only run_benchmark.sh, benchmark_serving's, has one); set it to 0 or leave it out",
    ]);
    expect(issues(baseConfig({ commands: { client: 'aiperf' }, benchmark: { dataset_file: '/t.jsonl', exact_warmup_rounds: 2 } }))[0]).toMatch(/aiperf client: upstream's run_benchmark_aiperf\.sh has no exact-shape warm-up/);
  });
});

async function freePorts(): Promise<{ base_port: number; router_port: number }> {
  const base = await freePortRange(3);
  return { base_port: base, router_port: base + 2 };
}

describe('job.sh run for real (stand-in servers; the client reports what it was given)', () => {
  const standin = ['node', '--import', 'tsx', 'tests/fixtures/standin-openai-server.ts', '--host', '{host}', '--port', '{port}', '--model', '{model}'];
  const report = ['bash', '-c', 'echo "client: $(wc -l < "$0") rows, first $(head -n1 "$0"), $1 prompts at $2, into $3"', '{dataset_file}', '{num_prompts}', '{concurrency}', '{result_dir}'];

  async function runWith(rows: number) {
    const dataset = path.join(scratch, `dataset-${rows}.jsonl`);
    writeFileSync(dataset, Array.from({ length: rows }, (_, i) => `{"row": ${i + 1}}\n`).join(''));
    const config = baseConfig({
      slurm: { numa_bind: false },
      benchmark: { mode: 'gen_only', concurrency_list: '1 2', multi_round: 2, input_length: 16, output_length: 8, dataset_file: dataset, exact_warmup_rounds: 2 },
      worker_config: { gen: { max_seq_len: 64 }, ctx: { max_seq_len: 32 } },
      commands: { worker: [...standin, '--role', '{role}'], router: [...standin, '--role', 'gen'], client: report },
      launch: { launcher: 'direct', health_interval_s: 1, ...(await freePorts()) },
    });
    const { logDir } = await build(config);
    const result = await execa('bash', [path.join(logDir, 'job.sh')], { cwd: root, reject: false, all: true, stdin: 'ignore', env: { SLURM_JOB_NODELIST: '' } });
    return { result, logDir, bench: readFileSync(path.join(logDir, '6_bench.log'), 'utf8') };
  }

  test('each warm-up gets the dataset\'s first concurrency x rounds rows, its measured run the next ones', async () => {
    const { result, logDir, bench } = await runWith(20);
    expect(result.exitCode, result.all).toBe(0);
    const lines = bench.split('\n').filter((l) => !l.startsWith('Hostname') && l !== 'Starting benchmark...' && l !== '');
    expect(lines).toEqual([
      'Warming up exact request shape with concurrency 1 ... 2 prompts',
      `client: 2 rows, first {"row": 1}, 2 prompts at 1, into ${logDir}/warmup_concurrency_1`,
      'Exact-shape warmup with concurrency 1 done',
      'Benchmarking with concurrency 1 ... 2 prompts',
      `client: 2 rows, first {"row": 3}, 2 prompts at 1, into ${logDir}/concurrency_1`,
      'Benchmark with concurrency 1 done',
      'Warming up exact request shape with concurrency 2 ... 4 prompts',
      `client: 4 rows, first {"row": 1}, 4 prompts at 2, into ${logDir}/warmup_concurrency_2`,
      'Exact-shape warmup with concurrency 2 done',
      'Benchmarking with concurrency 2 ... 4 prompts',
      `client: 4 rows, first {"row": 5}, 4 prompts at 2, into ${logDir}/concurrency_2`,
      'Benchmark with concurrency 2 done',
    ]);
    for (const dir of ['warmup_concurrency_1', 'concurrency_2']) expect(existsSync(path.join(logDir, dir))).toBe(true);
  });

  test('a dataset too short for warm-up plus measurement stops the job with run_benchmark.sh\'s message', async () => {
    const { result, bench } = await runWith(5);
    expect(result.exitCode).not.toBe(0);
    expect(bench).toContain('Dataset has 5 rows but warmup plus measurement requires 8');
    expect(bench).toContain('Benchmark with concurrency 1 done');
    expect(bench).not.toContain('Warming up exact request shape with concurrency 2');
  });
});
