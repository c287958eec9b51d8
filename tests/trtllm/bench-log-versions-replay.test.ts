// DEBUG_MODE=1 replays of 6_bench.log in every block layout benchmark_serving has printed (and the
// SA client's), through the whole framework (`vitest run --project disagg`): each test passes, and
// its results.json metrics carry the right failed/successful counts and latencies. A config for
// another GPU type with a validation error is skipped, not failed (as upstream never runs it).
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseConfig, type Json } from '../fixtures/serving/base-config.ts';
import { recordOf, removeWorkDirs, runSuite, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

const logs = path.resolve(import.meta.dirname, '../fixtures/logs/serving/versions');

/** Fixture -> concurrency list, {concurrency: [successful, failed]}, and what the config adds. */
const cases: Record<string, { list: string; expect: Record<number, [number, number]>; benchmark?: Json }> = {
  'v1-successful-only': { list: '8 16', expect: { 8: [64, 0], 16: [128, 0] } },
  'v2-user-throughput-failed-banner': { list: '8 16', expect: { 8: [64, 0], 16: [125, 3] } },
  'v3-total-and-failed-lines': { list: '8 16', expect: { 8: [64, 0], 16: [123, 5] } },
  'v4-std-min-max-decoded-tokens': { list: '8 16', expect: { 8: [62, 2], 16: [128, 0] } },
  'v5-goodput-energy': { list: '8 16', expect: { 8: [64, 0], 16: [127, 1] } },
  'total-and-successful-only': { list: '8', expect: { 8: [60, 4] } },
  'sa-bench-serving': { list: '4 8', expect: { 4: [32, 0], 8: [62, 2] }, benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8 } },
};

describe('replays of every benchmark_serving log layout', () => {
  it('each passes with the right numbers; an invalid config for another GPU is skipped', async () => {
    const configs: Record<string, Json | string> = {};
    for (const [name, c] of Object.entries(cases)) {
      configs[name] = baseConfig({ benchmark: { concurrency_list: c.list, failed_requests_tolerance: 5, ...c.benchmark } });
    }
    // streaming: false is an error on every GPU; on H100-only it is never run here (GPU_TYPE=GB200).
    configs.other_gpu_invalid = baseConfig({ metadata: { supported_gpus: ['H100'] }, benchmark: { streaming: false } });
    const { workDir, outputPath } = writeWorkDir(configs, 'log-versions-');
    Object.keys(cases).forEach((name, i) => {
      const dir = path.join(outputPath, 'slurm_logs', testIdOf(name));
      mkdirSync(dir, { recursive: true });
      copyFileSync(path.join(logs, `${name}.log`), path.join(dir, '6_bench.log'));
      writeFileSync(path.join(dir, `slurm-${9100 + i}.out`), '');
    });

    const run = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DEBUG_MODE: '1' } });
    expect(run.exitCode, run.output).toBe(0);
    for (const [name, c] of Object.entries(cases)) {
      const record = recordOf(run.records, testIdOf(name));
      expect(record?.verdict, `${name}: ${JSON.stringify(record?.failures)}`).toBe('passed');
      for (const [concurrency, [successful, failed]] of Object.entries(c.expect)) {
        const value = (metric: string) => record!.metrics.find((m) => m.name === metric && Number(m.labels.concurrency) === Number(concurrency))?.value;
        expect([value('SERVER_SUCCESSFUL_REQUESTS'), value('SERVER_FAILED_REQUESTS')], `${name} c=${concurrency}`).toEqual([successful, failed]);
        expect(value('SERVER_MEDIAN_TTFT')).toBe(100 + Number(concurrency));
      }
    }
    // skipped, not failed: its record says so, with the reason and no job
    expect(recordOf(run.records, testIdOf('other_gpu_invalid'))).toMatchObject({ verdict: 'skipped', jobId: null, failures: [], skipReason: 'GPU type GB200 is not in supported_gpus [H100]' });
    expect(run.output).toMatch(/Tests\s+7 passed \| 1 skipped \(8\)/);
  }, 240_000);
});
