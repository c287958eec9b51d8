// The suite end to end on the real local SLURM cluster: 12 jobs at DISAGG_BATCH_SIZE=5 go out in
// 3 batches with never more than 5 in flight (read from the ledger), then DEBUG_MODE=1 replays the
// finished run twice and reproduces its results each time, replacing its records and CSV rows. The jobs run stand-in servers
// (tests/fixtures/reliability): their numbers are fixture output, checked only for equality.
import { afterAll, expect, it } from 'vitest';
import type { LedgerEntry } from '../../framework/jobs/ledger.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { removeWorkDirs, runSuite, standinConfig, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

/** The most jobs in flight at once: +1 at SUBMITTED, -1 at the first terminal entry of a job. */
function maxInFlight(ledger: LedgerEntry[]): number {
  const ended = new Set<string>();
  let inFlight = 0;
  let most = 0;
  for (const entry of [...ledger].sort((a, b) => a.time.localeCompare(b.time))) {
    if (entry.state === 'SUBMITTED') most = Math.max(most, ++inFlight);
    else if (entry.terminal && !ended.has(entry.job)) {
      ended.add(entry.job);
      inFlight -= 1;
    }
  }
  return most;
}

/** A CSV row without its timing columns (total_time__sec, start/end timestamps differ by run). */
const withoutTiming = (row: string) => row.split(',').filter((_, i) => i < 9 || i > 11).join(',');

describeCluster('batches and replay, end to end', () => {
  it('12 jobs at batch size 5: 3 batches, at most 5 in flight; DEBUG_MODE replays the run twice', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `job${String(i).padStart(2, '0')}`);
    const configs = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await standinConfig({ client: 'ok' })] as const)));
    const { workDir, outputPath } = writeWorkDir(configs, 'batches-');
    const slurm = { SLURM_CONF: clusterEnv().SLURM_CONF };

    const live = await runSuite({ workDir, outputPath, scheduler: 'slurm', env: { ...slurm, DISAGG_BATCH_SIZE: '5' } });
    expect(live.exitCode, live.output).toBe(0);
    expect(live.records.filter((r) => r.verdict === 'passed')).toHaveLength(12);
    const submitted = live.ledger.filter((e) => e.state === 'SUBMITTED');
    expect(submitted).toHaveLength(12);
    const perBatch = [0, 1, 2].map((b) => submitted.filter((e) => e.batch === b).length);
    expect(perBatch).toEqual([5, 5, 2]);
    // At most a batch in flight. Not exactly 5: a batch's first job may end (and be polled) before
    // its fifth is submitted on a slow machine.
    expect(maxInFlight(live.ledger)).toBeLessThanOrEqual(5);
    // Batch k+1 goes out only after every job of batch k ended.
    for (const b of [1, 2]) {
      const previousJobs = new Set(submitted.filter((e) => e.batch === b - 1).map((e) => e.job));
      const lastEnd = live.ledger.filter((e) => previousJobs.has(e.job) && e.terminal).map((e) => e.time).sort().at(-1)!;
      const firstSubmit = submitted.filter((e) => e.batch === b).map((e) => e.time).sort()[0];
      expect(firstSubmit >= lastEnd).toBe(true);
    }
    const liveRows = live.csvRows.map(withoutTiming).sort();
    expect(liveRows.length).toBeGreaterThanOrEqual(12);

    for (const replayNumber of [1, 2]) {
      const replay = await runSuite({ workDir, outputPath, scheduler: 'slurm', env: { ...slurm, DEBUG_MODE: '1' } });
      expect(replay.exitCode, replay.output).toBe(0);
      // No new job: the replay submitted nothing.
      expect(replay.ledger.filter((e) => e.state === 'SUBMITTED' && e.scheduler !== 'replay')).toHaveLength(12);
      // results.json: the same 12 records (same test and job ids replace themselves), same metrics.
      expect(replay.records).toHaveLength(12);
      for (const name of names) {
        const id = testIdOf(name);
        const before = live.records.find((r) => r.testId === id)!;
        const after = replay.records.find((r) => r.testId === id)!;
        expect(after.jobId).toBe(before.jobId);
        expect(after.verdict).toBe('passed');
        expect(after.metrics).toEqual(before.metrics);
      }
      // The CSV: each test's rows replaced by the replay's (same rows, new timing), never added again.
      expect(replay.csvRows, `replay ${replayNumber}`).toHaveLength(live.csvRows.length);
      expect(replay.csvRows.map(withoutTiming).sort()).toEqual(liveRows);
    }
  }, 300_000);
});
