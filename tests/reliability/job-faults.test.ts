// Job faults, end to end: one real run of the suite (`vitest run --project disagg`, a child
// process) whose tests' jobs misbehave on purpose: a job exits non-zero, outlives its time limit,
// is cancelled from outside (scancel), leaves a log cut off mid-line, next to a job that is fine.
// Each faulty test fails with the reason in its message; the healthy one passes. On the real
// local SLURM cluster, and (all but the outside scancel, which has no local equivalent) on the
// local backend. The node-death case lives in cluster-faults.test.ts (a cluster of its own).
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import {
  jobOf, readOutputs, recordOf, runSuite, standinConfig, statesOf, csvRowPrefixOf, testIdOf, waitUntil, writeWorkDir, type StandinJob, removeWorkDirs,
} from '../fixtures/reliability/suite-run.ts';
import type { TestRecord } from '../../framework/results/json.ts';

afterAll(removeWorkDirs);

const jobs: Record<string, StandinJob> = {
  healthy: { client: 'ok' },
  exits: { client: 'exit:3' },
  // SLURM's minimum limit is a minute, enforced about every 30 s.
  overtime: { client: 'sleep:600', jobTime: '00:01:00' },
  truncated: { client: 'truncate' },
  cancelled: { client: 'sleep:300' },
};

async function workDir(names: string[]) {
  const configs = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await standinConfig(jobs[n])] as const)));
  return writeWorkDir(configs, 'job-faults-');
}

function failureOf(records: TestRecord[], name: string): string {
  const record = recordOf(records, testIdOf(name));
  expect(record, `no results.json record for ${name}`).toBeDefined();
  expect(record!.verdict).toBe('failed');
  return record!.failures.join('\n');
}

/** What every backend must show for the faults both have. */
function expectCommonVerdicts(records: TestRecord[], csvRows: string[]) {
  const healthy = recordOf(records, testIdOf('healthy'))!;
  expect(healthy).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED', failures: [] });
  expect(healthy.metrics.map((m) => m.name)).toContain('SERVER_MEDIAN_TTFT');
  // Only the healthy test has CSV rows: a failed test writes no performance numbers.
  expect(csvRows.length).toBeGreaterThan(0);
  expect(csvRows.every((row) => row.startsWith(csvRowPrefixOf('healthy')))).toBe(true);

  const exits = failureOf(records, 'exits');
  expect(exits).toMatch(/job \S+ ended FAILED \(exit code 3/);
  expect(exits).toContain('stand-in client: failing on purpose with exit 3');
  expect(recordOf(records, testIdOf('exits'))!.schedulerState).toBe('FAILED');

  const overtime = failureOf(records, 'overtime');
  expect(overtime).toMatch(/job \S+ ended TIMEOUT/);
  expect(overtime).toMatch(/CANCELLED AT \S+ DUE TO TIME LIMIT/);

  // The job itself succeeded; the log it left is cut off mid-line, and that is the reason.
  const truncated = failureOf(records, 'truncated');
  expect(recordOf(records, testIdOf('truncated'))!.schedulerState).toBe('COMPLETED');
  expect(truncated).toMatch(/6_bench\.log: line \d+: concurrency 1: result block is truncated/);
}

describeCluster.concurrent('job faults, end to end', () => {
  const leftovers: string[] = [];
  afterAll(async () => {
    if (leftovers.length) await execa('scancel', leftovers, { env: clusterEnv(), reject: false });
  });

  it('on SLURM: each faulty job fails its test with the reason, the healthy one passes', { timeout: 300_000 }, async () => {
    const { workDir: dir, outputPath } = await workDir(['healthy', 'exits', 'overtime', 'truncated', 'cancelled']);
    const run = runSuite({ workDir: dir, outputPath, scheduler: 'slurm', env: { SLURM_CONF: clusterEnv().SLURM_CONF } });
    // Cancel one job from outside, as a user or an admin would, once it runs.
    const cancelled = testIdOf('cancelled');
    const job = await waitUntil('the job of the cancelled test to run', () => statesOf(outputPath, cancelled).includes('RUNNING') && jobOf(readOutputs(outputPath).ledger, cancelled), 120_000);
    leftovers.push(job);
    await execa('scancel', [job], { env: clusterEnv() });

    const { records, csvRows, output, ledger } = await run;
    expect(records.map((r) => r.testId).sort(), output).toEqual(Object.keys(jobs).map((n) => testIdOf(n)).sort());
    expectCommonVerdicts(records, csvRows);
    expect(failureOf(records, 'cancelled')).toMatch(new RegExp(`job ${job} ended CANCELLED`));
    // Every job's end is in the ledger; none is left in the queue.
    for (const id of new Set(ledger.map((e) => e.job))) {
      expect(ledger.filter((e) => e.job === id).at(-1)).toMatchObject({ terminal: true });
    }
    const queued = (await execa('squeue', ['-h', '-o', '%i', '-j', [...new Set(ledger.map((e) => e.job))].join(',')], { env: clusterEnv(), reject: false })).stdout.trim();
    expect(queued).toBe('');
  });

  it('on the local backend: the same verdicts', { timeout: 300_000 }, async () => {
    const { workDir: dir, outputPath } = await workDir(['healthy', 'exits', 'overtime', 'truncated']);
    const { records, csvRows, output } = await runSuite({ workDir: dir, outputPath, scheduler: 'local' });
    expect(records, output).toHaveLength(4);
    expectCommonVerdicts(records, csvRows);
  });
});
