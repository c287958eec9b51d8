// job.sh run for real, on this machine (launch.launcher: direct, so no srun), with STAND-IN
// servers: tests/fixtures/standin-openai-server.ts plays the workers and the router (the serving
// engine cannot run here), and shell one-liners play servers that hang or die. The client is the
// project's own serve-bench. Checked: markers and results, the health-wait timeout, fail-fast on
// a dead server, SIGTERM, a failing client, and that no step outlives the job.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { disaggType } from '../../../../framework/types/disagg.ts';
import { extractMetrics } from '../../../../framework/metrics/log-parser.ts';
import { freePortRange, portFree } from '../../../../runners/common/free-port.ts';
import { baseConfig, type Json } from '../../../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../../../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'job-script-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const standin = ['node', '--import', 'tsx', 'tests/fixtures/standin-openai-server.ts', '--host', '{host}', '--port', '{port}', '--model', '{model}'];
/** A server that never answers: records its pid, then sleeps. */
const hanging = ['bash', '-c', 'echo $$ > "$0"; exec sleep 300', '{log_dir}/{server}.pid'];
const hangingRouter = ['bash', '-c', 'echo $$ > "$0"; exec sleep 300', '{log_dir}/ROUTER.pid'];

/** A base port with `count` free ports after it and a free router port. */
async function freePorts(count: number): Promise<{ base_port: number; router_port: number }> {
  const base = await freePortRange(count + 1);
  return { base_port: base, router_port: base + count };
}

let jobs = 0;
async function buildJob(patch: Json, servers = 2) {
  const logDir = path.join(scratch, `job ${++jobs}`);
  const config = baseConfig({
    slurm: { numa_bind: false },
    benchmark: { concurrency_list: '1 2', multi_round: 2, input_length: 16, output_length: 8 },
    worker_config: { gen: { max_seq_len: 64 }, ctx: { max_seq_len: 32 } },
    ...patch,
    launch: { launcher: 'direct', health_interval_s: 1, ...(await freePorts(servers)), ...((patch.launch as Json) ?? {}) },
  });
  const built = await disaggType.buildJob({ testId: 'disagg_perf_t', category: 'perf', config, logDir, workDir: root, packageRoot: root, gpuType: undefined });
  return { config, logDir, script: built.scriptPath, env: built.env, read: (name: string) => readFileSync(path.join(logDir, name), 'utf8') };
}

/** Runs job.sh as a scheduler would: `jobEnv` is the BuiltJob's env (sbatch's environment, the local export). */
function runJob(script: string, jobEnv: Record<string, string> = {}) {
  return execa('bash', [script], { cwd: root, reject: false, all: true, stdin: 'ignore', env: { SLURM_JOB_NODELIST: '', ...jobEnv } });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids the servers recorded as they started (a server the job stopped before it started has none, and no process). */
function recordedPids(logDir: string, names: string[]): number[] {
  return names.flatMap((name) => {
    const file = path.join(logDir, `${name}.pid`);
    const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
    return pid > 0 ? [pid] : [];
  });
}

describe('job.sh with stand-in servers', () => {
  test('serves, benchmarks every concurrency between its markers, and stops every server', async () => {
    const hostileModel = `/models/it's "R1" $(touch PWNED)`;
    const job = await buildJob({
      environment: { model_path: hostileModel },
      commands: { worker: [...standin, '--role', '{role}'], router: [...standin, '--role', 'gen'], client: 'serve-bench' },
    });
    const result = await runJob(job.script);
    expect(result.exitCode, result.all).toBe(0);

    const bench = job.read('6_bench.log');
    // Upstream's UCX warm-up first (e2e: 2 x ctx world 4 x gen world 4 requests), its block included.
    const markers = bench.split('\n').filter((l) => /^(Benchmark(ing)? with concurrency|warming up ucx|UCX warmup done|=+ Serving Benchmark Result)/.test(l));
    expect(markers).toEqual([
      'warming up ucx connections with small requests... 32',
      '============ Serving Benchmark Result ============',
      'UCX warmup done',
      'Benchmarking with concurrency 1 ... 2 prompts',
      '============ Serving Benchmark Result ============',
      'Benchmark with concurrency 1 done',
      'Benchmarking with concurrency 2 ... 4 prompts',
      '============ Serving Benchmark Result ============',
      'Benchmark with concurrency 2 done',
    ]);
    expect(bench).toMatch(/^serve-bench: 32 prompts to .*, input 100 .*output 10 tokens/m);
    expect(existsSync(path.join(job.logDir, 'job_done.txt'))).toBe(true);
    // The model path reached the servers as one argument, and nothing in it ran.
    expect(job.read('3_output_GEN_0.log')).toContain(`model=${hostileModel} listening`);
    expect(existsSync(path.join(root, 'PWNED'))).toBe(false);

    // The metrics layer reads what the job wrote, and the verdict is a pass.
    const specs = disaggType.metrics(job.config, 'perf');
    const extracted = await extractMetrics(job.logDir, specs);
    expect(extracted.problems).toEqual([]);
    const ttft = extracted.metrics.filter((m) => m.name === 'SERVER_MEDIAN_TTFT').map((m) => m.labels.concurrency);
    expect(ttft).toEqual([1, 2]);
    const verdict = disaggType.verdict({ testId: 't', category: 'perf', config: job.config, logDir: job.logDir, ...extracted });
    expect(verdict).toEqual({ passed: true, failures: [] });

    // Nothing listens any more on the servers' ports.
    const { base_port, router_port } = job.config.launch as { base_port: number; router_port: number };
    expect(await Promise.all([base_port, base_port + 1, router_port].map((port) => portFree(port)))).toEqual([true, true, true]);
  });

  test('a requeued job (SLURM_RESTART_COUNT) moves what the attempt before wrote to attempt-<n>/ and is judged on its own output', async () => {
    const job = await buildJob({ commands: { worker: [...standin, '--role', '{role}'], router: [...standin, '--role', 'gen'], client: 'serve-bench' } });
    // What a first attempt killed mid-client left (a node died): its cut-off bench log and result folder.
    const cutOff = 'Hostname: 127.0.0.1, Port: 1\nStarting benchmark...\nBenchmarking with concurrency 1 ... 2 prompts\n';
    writeFileSync(path.join(job.logDir, '6_bench.log'), cutOff);
    writeFileSync(path.join(job.logDir, '3_output_GEN_0.log'), 'first attempt\n');
    mkdirSync(path.join(job.logDir, 'concurrency_1'), { recursive: true });
    writeFileSync(path.join(job.logDir, 'concurrency_1', 'partial.json'), '{');
    const inputs = ['job.sh', 'gen_config.yaml', 'ctx_config.yaml', 'allocations.json'].filter((f) => existsSync(path.join(job.logDir, f)));

    const result = await runJob(job.script, { ...job.env, SLURM_RESTART_COUNT: '1' });
    expect(result.exitCode, result.all).toBe(0);
    expect(result.all).toMatch(/restart 1 of this job \(requeued\): 3 file\(s\) of the attempt before moved to .*\/attempt-1/);
    expect(job.read('attempt-1/6_bench.log')).toBe(cutOff);
    expect(job.read('attempt-1/3_output_GEN_0.log')).toBe('first attempt\n');
    expect(job.read('attempt-1/concurrency_1/partial.json')).toBe('{');
    // The job's inputs stay where they are; this attempt's logs hold only its own output.
    for (const f of inputs) expect(existsSync(path.join(job.logDir, f)), f).toBe(true);
    expect(job.read('6_bench.log').match(/^Starting benchmark\.\.\.$/gm)).toHaveLength(1);
    const extracted = await extractMetrics(job.logDir, disaggType.metrics(job.config, 'perf'));
    expect(extracted.problems).toEqual([]);
    expect(disaggType.verdict({ testId: 't', category: 'perf', config: job.config, logDir: job.logDir, ...extracted })).toEqual({ passed: true, failures: [] });
  });

  test('a router that never becomes healthy fails the job with the timeout message and every server log', async () => {
    const job = await buildJob({ commands: { worker: hanging, router: hangingRouter }, launch: { health_timeout_s: 2 } });
    const result = await runJob(job.script);
    expect(result.exitCode).not.toBe(0);
    const wait = job.read('5_wait_server.log');
    expect(wait).toContain('Server did not become healthy within 2 s');
    for (const log of ['3_output_GEN_0.log', '3_output_CTX_0.log', '4_output_server.log']) {
      expect(wait).toContain(`----- last 40 lines of ${path.join(job.logDir, log)} -----`);
    }
    expect(result.all).toContain('Server did not become healthy within 2 s');
    expect(existsSync(path.join(job.logDir, '6_bench.log'))).toBe(false);
    for (const pid of recordedPids(job.logDir, ['GEN_0', 'CTX_0', 'ROUTER'])) expect(alive(pid)).toBe(false);
  });

  test('a server that dies while the job waits fails it at once, with its log', async () => {
    // The generation server crashes once the others have recorded their pids; the others hang.
    const genDies = ['bash', '-c', 'if [ "$1" = gen ]; then d=$(dirname "$0"); until [ -s "$d/CTX_0.pid" ] && [ -s "$d/ROUTER.pid" ]; do sleep 0.05; done; echo "worker crashed: CUDA error" >&2; exit 3; fi; echo $$ > "$0"; exec sleep 300', '{log_dir}/{server}.pid', '{role}'];
    const job = await buildJob({ commands: { worker: genDies, router: hangingRouter }, launch: { health_timeout_s: 600 } });
    const result = await runJob(job.script);
    expect(result.exitCode).not.toBe(0);
    expect(result.all).toContain('GEN_0 exited with status 3 while it should be serving');
    expect(job.read('5_wait_server.log')).toContain('worker crashed: CUDA error');
    expect(result.all).not.toContain('Server did not become healthy');
    for (const pid of recordedPids(job.logDir, ['CTX_0', 'ROUTER'])) expect(alive(pid)).toBe(false);
  });

  test('SIGTERM (scancel, a time limit) stops every step and the job exits non-zero', async () => {
    const job = await buildJob({ commands: { worker: hanging, router: hangingRouter }, launch: { health_timeout_s: 600 } });
    const child = runJob(job.script);
    // Wait until the job is in its health wait, then cancel it as SLURM would.
    const ready = () => ['5_wait_server.log', 'GEN_0.pid', 'CTX_0.pid', 'ROUTER.pid'].every((f) => existsSync(path.join(job.logDir, f)));
    for (const deadline = Date.now() + 60_000; !ready(); await new Promise((r) => setTimeout(r, 100))) {
      if (Date.now() > deadline) throw new Error('the job never reached its health wait');
    }
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(143);
    expect(result.all).toContain('received SIGTERM: stopping every step');
    for (const pid of recordedPids(job.logDir, ['GEN_0', 'CTX_0', 'ROUTER'])) expect(alive(pid)).toBe(false);
  });

  test('config secrets reach the servers from the job environment, and no file the job writes', async () => {
    // Each worker writes the HF_TOKEN it got next to its pid, then becomes the stand-in server.
    const tokenThenServe = ['bash', '-c', 'printf %s "$HF_TOKEN" >"$0"; exec "$@"', '{log_dir}/{server}.token', ...standin, '--role', '{role}'];
    const job = await buildJob({
      environment: { worker_env_var: 'HF_TOKEN=hf_secret123 OTHER=1', gen_worker_env_var: 'HF_TOKEN=hf_gen456' },
      commands: { worker: tokenThenServe, router: [...standin, '--role', 'gen'] },
      benchmark: { enable_benchmark: false },
    });
    expect(job.env).toEqual({ HF_TOKEN: 'hf_secret123', DISAGG_SECRET_2_HF_TOKEN: 'hf_gen456' });
    // Without the job environment the script stops before starting anything, naming the variable.
    const bare = await runJob(job.script);
    expect(bare.exitCode).not.toBe(0);
    expect(bare.all).toContain('HF_TOKEN: must be set in the job environment');
    expect(existsSync(path.join(job.logDir, '3_output_CTX_0.log'))).toBe(false);

    const result = await runJob(job.script, job.env);
    expect(result.exitCode, result.all).toBe(0);
    expect(job.read('CTX_0.token')).toBe('hf_secret123');
    expect(job.read('GEN_0.token')).toBe('hf_gen456');
    for (const name of readdirSync(job.logDir).filter((f) => !f.endsWith('.token'))) {
      const text = readFileSync(path.join(job.logDir, name), 'utf8');
      for (const secret of ['hf_secret123', 'hf_gen456']) expect(text, `${secret} in ${name}`).not.toContain(secret);
    }
  });

  test('a failing client fails the job: no done marker for its concurrency, no job_done', async () => {
    const job = await buildJob({
      commands: { worker: hanging, router: [...standin, '--role', 'gen'], client: ['bash', '-c', 'echo "client: connection refused"; exit 7'] },
    });
    const result = await runJob(job.script);
    expect(result.exitCode).toBe(7);
    expect(result.all).toContain('client c=1 failed with exit status 7');
    const bench = job.read('6_bench.log');
    expect(bench.startsWith('warming up ucx connections with small requests... 32\n')).toBe(true);
    expect(bench.endsWith('UCX warmup done\nHostname: 127.0.0.1, Port: ' + (job.config.launch as Json).router_port + '\nStarting benchmark...\nBenchmarking with concurrency 1 ... 2 prompts\nclient: connection refused\n')).toBe(true);
    expect(existsSync(path.join(job.logDir, 'job_done.txt'))).toBe(false);
    for (const pid of recordedPids(job.logDir, ['GEN_0', 'CTX_0'])) expect(alive(pid)).toBe(false);
  });
});
