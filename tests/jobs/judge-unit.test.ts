// The verdict of a finished job (judge.ts) from what the job recorded: the scheduler's final state
// AND the log files in its folder (real files, written here as the job would have). A job passes
// only when it COMPLETED and its logs hold the metrics within the config's references.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeJob } from '../../framework/jobs/judge.ts';
import { testType } from '../../framework/types/registry.ts';
import type { JobState } from '../../framework/scheduler/scheduler.ts';
import { GOLDEN_NIXLBENCH_LOG, NIXLBENCH_LOG, plannedTests, scratch, settingsFor, writeConfigs, type ConfigOptions } from '../fixtures/jobs/run-harness.ts';

const scratches: Array<{ remove(): void }> = [];
afterAll(() => scratches.forEach((s) => s.remove()));

/** Judges one job of a nixlbench config whose folder holds `files` (stdout/stderr as the scheduler names them). */
async function judge(state: JobState, files: Record<string, string>, options: ConfigOptions = {}) {
  const work = scratch('jobs-judge');
  scratches.push(work);
  writeConfigs(work, ['judged'], options);
  const [test] = plannedTests(settingsFor(work));
  const logDir = path.join(work.outputPath, 'slurm_logs', test.id);
  mkdirSync(logDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(logDir, name), text);
  const logs = { stdout: path.join(logDir, 'slurm-42.out'), stderr: path.join(logDir, 'slurm-42.err') };
  return judgeJob({ test, type: testType('nixl')!, status: { id: '42', state, terminal: true }, logs, logDir });
}

describe('judgeJob', () => {
  it('COMPLETED with the tool\'s log: passed, with the log\'s values', async () => {
    const outcome = await judge('COMPLETED', { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG });
    expect(outcome.failures).toEqual([]);
    expect(outcome.passed).toBe(true);
    const bw = outcome.metrics.find((m) => m.name === 'BW_GBPS' && m.labels?.block_size === 4096 && m.labels?.batch_size === 1);
    expect(bw?.value).toBe(0.731204);
  });

  it('COMPLETED without the tool\'s log: failed, naming the missing file', async () => {
    const outcome = await judge('COMPLETED', { 'slurm-42.out': 'done\n' });
    expect(outcome.passed).toBe(false);
    expect(outcome.failures.join('\n')).toContain(NIXLBENCH_LOG);
  });

  it('a value outside the config\'s reference bounds fails the job that completed', async () => {
    const references = { 'BW_GBPS@block_size=4096,batch_size=1,op_type=READ': { ref: 10, lower: -0.1, upper: 0.1 } };
    const outcome = await judge('COMPLETED', { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG }, { references });
    expect(outcome.passed).toBe(false);
    expect(outcome.failures).toHaveLength(1);
    expect(outcome.failures[0]).toMatch(/BW_GBPS/);
    expect(outcome.failures[0]).toMatch(/0\.731204/);
    // Within its bounds, the same reference passes.
    const within = await judge('COMPLETED', { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG }, { references: { 'BW_GBPS@block_size=4096,batch_size=1,op_type=READ': { ref: 0.73, lower: -0.1, upper: 0.1 } } });
    expect(within.failures).toEqual([]);
  });

  it.each(['FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL', 'UNKNOWN'] as const)('%s with a perfect log is failed, its values not kept', async (state) => {
    const outcome = await judge(state, { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG, 'slurm-42.err': 'srun: error: n2: task 1: Killed\n' });
    expect(outcome.passed).toBe(false);
    expect(outcome.metrics).toEqual([]);
    expect(outcome.failures[0]).toMatch(new RegExp(`^job 42 ended ${state}\\nlast lines of .*slurm-42\\.err:\\nsrun: error: n2: task 1: Killed$`));
  });

  it('reads only the end of a huge error log', async () => {
    const big = 'x'.repeat(200) + '\n';
    const outcome = await judge('FAILED', { 'slurm-42.err': big.repeat(20_000) + 'the last word\n' });
    expect(outcome.failures[0]).toMatch(/the last word$/);
    expect(outcome.failures[0].length).toBeLessThan(10_000);
  });
});
