// Records a replay leaves, end to end: a real run (`vitest run --project disagg`, local scheduler,
// stand-in serving stack) and then DEBUG_MODE=1 replays of its logs. A replay replaces each test's
// record and CSV rows (never adds them again) and keeps its run block (else writes its own, left out
// of the history); a test whose log folder is gone keeps its one
// record; a job.json that is there but garbage fails its test saying so, instead of passing with
// the state assumed COMPLETED.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { TestRecord } from '../../framework/results/json.ts';
import { csvRowPrefixOf, recordOf, removeWorkDirs, runSuite, standinConfig, testIdOf, writeWorkDir, type SuiteOptions } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

const rowsOf = (rows: string[], name: string) => rows.filter((r) => r.startsWith(csvRowPrefixOf(name)));

it('DEBUG_MODE replays replace records and CSV rows; a missing log folder keeps the one record; a garbage job.json fails its test', { timeout: 300_000 }, async () => {
  const names = ['a', 'b', 'c'];
  const configs = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await standinConfig({ client: 'ok' })] as const)));
  const dir = writeWorkDir(configs, 'records-');
  const options: SuiteOptions = { ...dir, scheduler: 'local' };
  const live = await runSuite(options);
  expect(live.exitCode, live.output).toBe(0);
  const perTest = rowsOf(live.csvRows, 'a').length;
  expect(perTest).toBeGreaterThan(0);

  let previous = live;
  for (const round of [1, 2]) {
    const replay = (previous = await runSuite({ ...options, env: { DEBUG_MODE: '1' } }));
    expect(replay.exitCode, replay.output).toBe(0);
    expect(replay.records, `replay ${round}`).toHaveLength(3);
    expect(replay.csvRows, `replay ${round}`).toHaveLength(live.csvRows.length);
    for (const n of names) expect(recordOf(replay.records, testIdOf(n))!.jobId).toBe(recordOf(live.records, testIdOf(n))!.jobId);
    // Each record keeps the run it came from (what `history import` keeps), naming the replay;
    // the history holds that run already: the replay adds nothing to it.
    for (const n of names) expect(recordOf(replay.records, testIdOf(n))!.run).toEqual({ ...recordOf(live.records, testIdOf(n))!.run, replayedBy: expect.stringMatching(/^run-/) });
    expect(replay.output).toMatch(/history: 0 record\(s\), 0 metric value\(s\) appended/);
  }

  // b's logs are gone; c's job.json is garbage (its slurm-<job id>.out still names the job).
  const logDir = (n: string) => path.join(dir.outputPath, 'slurm_logs', testIdOf(n));
  rmSync(logDir('b'), { recursive: true });
  writeFileSync(path.join(logDir('c'), 'job.json'), '{"jobId": "L1-x-1", "status": {"sta');
  // a's record lost its run block (as a version before run blocks wrote it).
  const resultsFile = path.join(dir.outputPath, 'results.json');
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as { records: TestRecord[] };
  for (const r of results.records) if (r.testId === testIdOf('a')) delete r.run;
  writeFileSync(resultsFile, JSON.stringify(results));
  const replay = await runSuite({ ...options, env: { DEBUG_MODE: '1' } });
  expect(replay.exitCode, replay.output).toBe(1);
  expect(replay.output).toMatch(new RegExp(`FAIL .*${testIdOf('b')}[\\s\\S]*no logs to replay[\\s\\S]*nothing was replayed: results\\.json and the CSV keep what they held`));
  expect(replay.output).toMatch(/ended UNKNOWN[\s\S]*job\.json is not JSON \([^)]*\): how the job ended is unknown/);
  // One record per id: b's as the last replay left it, c's the replay's failure of the same job.
  expect(recordOf(replay.records, testIdOf('b'))).toEqual(recordOf(previous.records, testIdOf('b')));
  expect(recordOf(replay.records, testIdOf('c'))).toMatchObject({ verdict: 'failed', jobId: recordOf(live.records, testIdOf('c'))!.jobId, schedulerState: 'UNKNOWN' });
  expect(replay.records).toHaveLength(3);
  // b's rows stay; c's, no longer a passed result, are gone; a's replaced again.
  expect(rowsOf(replay.csvRows, 'b')).toEqual(rowsOf(previous.csvRows, 'b'));
  expect(rowsOf(replay.csvRows, 'c')).toEqual([]);
  expect(rowsOf(replay.csvRows, 'a')).toHaveLength(perTest);
  expect(existsSync(logDir('b'))).toBe(false); // a replay creates nothing
  // a's replay has no run to keep: the replay's own, which no run's end appends (its numbers are an earlier run's).
  expect(recordOf(replay.records, testIdOf('a'))!.run).toMatchObject({ id: expect.stringMatching(/^run-/), notAppended: expect.stringMatching(/^a replay \(DEBUG_MODE\)/) });
  expect(replay.output).toMatch(/history: 0 record\(s\), 0 metric value\(s\) appended/);
});
