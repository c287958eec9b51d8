// The llamacpp serving job on the real local SLURM cluster, through the whole framework: the
// shipped CPU config with its context and generation servers on different nodes of the cluster,
// the KV cache handed over between them, the client's figures and the hand-over figures recorded.
// (The local cluster's nodes share this host, so the hand-over goes over shm.)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { recordOf, removeWorkDirs, repoRoot, runSuite, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';
import { freePortRange } from '../../runners/common/free-port.ts';

afterAll(removeWorkDirs);

describeCluster('the llamacpp serving job on SLURM', () => {
  it('context and generation servers on different nodes serve the client; TTFT, ITL and the hand-over are recorded', async () => {
    const config = parse(readFileSync(path.join(repoRoot, 'test_configs/disagg/perf/llamacpp-tiny_128-32_ctx1_gen1_cpu.yaml'), 'utf8'));
    const base = await freePortRange(4);
    config.slurm = { ...config.slurm, partition: 'debug', job_time: '00:05:00' };
    config.hardware.gpus_per_node = 1;
    config.launch = { ...config.launch, base_port: base, router_port: base + 2 };
    config.benchmark = { ...config.benchmark, concurrency_list: '2', multi_round: 2 };
    const { workDir, outputPath } = writeWorkDir({ llamacpp_slurm: config }, 'llamacpp-slurm-');
    const run = await runSuite({ workDir, outputPath, scheduler: 'slurm', env: { SLURM_CONF: clusterEnv().SLURM_CONF }, timeoutMs: 360_000 });
    expect(run.exitCode, run.output).toBe(0);
    const id = testIdOf('llamacpp_slurm');
    const record = recordOf(run.records, id)!;
    expect(record.verdict).toBe('passed');
    const names = new Set(record.metrics.map((m) => m.name));
    for (const name of ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_ITL', 'SERVER_OUTPUT_TOKEN_THROUGHPUT', 'SERVER_MEDIAN_KV_HANDOVER_BYTES', 'SERVER_P99_KV_HANDOVER_TIME']) expect(names).toContain(name);
    const allocations = JSON.parse(readFileSync(path.join(outputPath, 'slurm_logs', id, 'allocations.json'), 'utf8'));
    const nodesOf = (type: string) => (allocations.servers as Array<{ server_type: string; node_indices: number[] }>).filter((s) => s.server_type === type).flatMap((s) => s.node_indices);
    expect(nodesOf('CTX')).toHaveLength(1);
    expect(nodesOf('GEN')).toHaveLength(1);
    expect(nodesOf('CTX')[0]).not.toBe(nodesOf('GEN')[0]);
    // Each server's log says it joined the transfer world, each from its own SLURM node.
    const log = (name: string) => readFileSync(path.join(outputPath, 'slurm_logs', id, name), 'utf8');
    expect(log('3_output_CTX_0.log')).toContain('joining the KV transfer world as rank 0');
    expect(log('3_output_GEN_0.log')).toMatch(/kv_handover request=\S+ bytes=\d+/);
  }, 420_000);
});
