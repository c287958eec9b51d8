// The disaggregated-serving job on the real local SLURM cluster (scripts/slurm-local.sh: several
// slurmd nodes, fake GPU gres), submitted by the SLURM backend: one srun step per server on its
// nodes, the router, the health wait, serve-bench at two concurrencies, the metrics and the
// verdict. The workers and the router are STAND-INS (tests/fixtures/standin-openai-server.ts): the
// serving engine cannot run here. The cluster has no PMIx, so these configs set launch.mpi: null.
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, test } from 'vitest';
import { SlurmScheduler } from '../../../../framework/scheduler/slurm.ts';
import type { JobRequest, JobStatus } from '../../../../framework/scheduler/scheduler.ts';
import { extractMetrics } from '../../../../framework/metrics/log-parser.ts';
import { disaggType } from '../../../../framework/types/disagg.ts';
import { baseConfig, type Json } from '../../../fixtures/serving/base-config.ts';
import { clusterEnv, describeCluster } from '../../../setup/cluster.ts';

const root = path.resolve(import.meta.dirname, '../../../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'job-slurm-'));
const submitted: string[] = [];

const standin = ['node', '--import', 'tsx', 'tests/fixtures/standin-openai-server.ts', '--host', '{host}', '--port', '{port}', '--model', '{model}'];
/** Each server step has one task per GPU; as trtllm-llmapi-launch does, only rank 0 serves. */
const rank0 = ['bash', '-c', 'if [ "${SLURM_PROCID:-0}" = 0 ]; then exec "$@"; else exec sleep 100000; fi', 'rank0'];
const hangingRouter = ['bash', '-c', 'echo $$ > "$0"; exec sleep 300', '{log_dir}/ROUTER.pid'];

describeCluster('disagg job on the local SLURM cluster', () => {
  const scheduler = () => new SlurmScheduler({ env: clusterEnv(), retryBaseDelayMs: 100 });
  afterAll(async () => {
    await scheduler().cancel(submitted);
    rmSync(scratch, { recursive: true, force: true });
  });

  async function run(name: string, patch: Json) {
    const logDir = path.join(scratch, name);
    const config = baseConfig({
      slurm: { partition: 'debug', job_time: '00:05:00', numa_bind: false },
      hardware: { gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 2 },
      benchmark: { concurrency_list: '1 2', multi_round: 2, input_length: 16, output_length: 8 },
      worker_config: { gen: { max_seq_len: 64 }, ctx: { max_seq_len: 32 } },
      ...patch,
      // Ports of their own, so the two jobs (and other tests) never meet on one.
      launch: { mpi: null, health_interval_s: 1, ...(patch.launch as Json) },
    });
    const built = await disaggType.buildJob({ testId: `disagg_perf_${name}`, category: 'perf', config, logDir, workDir: root, packageRoot: root, gpuType: undefined });
    const request: JobRequest = { name, scriptPath: built.scriptPath, logDir, workDir: root, resources: built.resources };
    const s = scheduler();
    const id = await s.submit(request);
    submitted.push(id);
    let status: JobStatus | undefined;
    // Within the test's budget: a 3-node job may wait in the queue while other tests' jobs run.
    const deadline = Date.now() + 270_000;
    while (Date.now() < deadline && !status?.terminal) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await s.poll([id])).get(id) ?? status;
    }
    const logs = s.logs(id, request);
    const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');
    return { config, logDir, status: status!, out: read(logs.stdout) + read(logs.stderr), read: (f: string) => read(path.join(logDir, f)) };
  }

  test('1 context + 2 generation servers, router, health wait, serve-bench at two concurrencies', { timeout: 300_000 }, async () => {
    const job = await run('serving', {
      commands: { worker: [...rank0, ...standin, '--role', '{role}'], router: [...standin, '--role', 'gen'], client: 'serve-bench' },
      launch: { base_port: 15310, router_port: 15319 },
    });
    expect(job.status.state, job.out).toBe('COMPLETED');
    // Three server steps on three distinct nodes of the allocation.
    expect(job.out).toMatch(/nodes: n\d n\d n\d /);
    const extracted = await extractMetrics(job.logDir, disaggType.metrics(job.config, 'perf'));
    expect(extracted.problems).toEqual([]);
    for (const name of ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL']) {
      // concurrency_list "1 2" per generation server, two generation servers.
      expect(extracted.metrics.filter((m) => m.name === name).map((m) => m.labels.concurrency)).toEqual([2, 4]);
    }
    expect(disaggType.verdict({ testId: 't', category: 'perf', config: job.config, logDir: job.logDir, ...extracted })).toEqual({ passed: true, failures: [] });
  });

  test('a router that never becomes healthy fails the job with the wait-timeout message and leaves nothing running', { timeout: 300_000 }, async () => {
    const job = await run('unhealthy', {
      commands: { worker: [...rank0, ...standin, '--role', '{role}'], router: hangingRouter, client: 'serve-bench' },
      launch: { base_port: 15320, router_port: 15329, health_timeout_s: 3 },
    });
    expect(job.status.state).toBe('FAILED');
    expect(job.out).toContain('Server did not become healthy within 3 s');
    expect(job.read('5_wait_server.log')).toContain('----- last 40 lines of');
    // The router recorded its pid as it started (none if the job stopped before it started).
    const routerPid = Number(job.read('ROUTER.pid').trim());
    if (routerPid > 0) expect(() => process.kill(routerPid, 0)).toThrow();
    // No stand-in worker of this job (ports 15320-15322) is left.
    const processes = (await execa('ps', ['-eo', 'args'])).stdout.split('\n');
    expect(processes.filter((p) => p.includes('standin-openai-server.ts') && /--port 1532\d\b/.test(p))).toEqual([]);
  });
});
