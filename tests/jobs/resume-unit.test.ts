// RESUME=1 on its own (resume.ts, and the session and job manager acting on its plan), at the
// scheduler interface: a first run is killed half-way, leaving its ledger, job.json files and
// results.json as such a run leaves them; the STAND-IN FOR THE CLUSTER (tests/fixtures/jobs/
// recording-scheduler.ts) still knows that run's jobs, as a cluster outlives the run. A second run
// with RESUME=1 must pick each test up as resume.ts's table says. The same on the real cluster:
// tests/jobs/leftover-jobs.test.ts and tests/reliability/interruption.test.ts.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RecordingScheduler, type JobScript } from '../fixtures/jobs/recording-scheduler.ts';
import { GOLDEN_NIXLBENCH_LOG, NIXLBENCH_LOG, NO_GPU, ledgerStates, openSession, plannedTests, scratch, settingsFor, writeConfigs, type Scratch } from '../fixtures/jobs/run-harness.ts';
import { JobManager } from '../../framework/jobs/job-manager.ts';
import { JobWatcher } from '../../framework/scheduler/watcher.ts';
import { Ledger, readLedger } from '../../framework/jobs/ledger.ts';
import { recordCancelled } from '../../framework/jobs/leftover-jobs.ts';
import { describeResume, planResume } from '../../framework/jobs/resume.ts';
import { saveTestResult } from '../../framework/jobs/save-result.ts';
import { readResults } from '../../framework/results/json.ts';

const files = { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG };
/** What each test's job does on the stand-in (by config name). */
const scripts: Record<string, JobScript> = {
  // judged and saved by the killed run
  recorded: { states: ['RUNNING', 'COMPLETED'], files },
  // judged (ledger, job.json) but killed before its result was written
  judged: { states: ['RUNNING', 'COMPLETED'], files },
  // still in flight when the run died; ends once someone watches it
  running: { states: ['PENDING', 'RUNNING', 'RUNNING', 'RUNNING', 'RUNNING', 'COMPLETED'], files },
  // ended while no run watched it (the test ends it)
  unwatched: { states: ['RUNNING'], files },
  // cancelled by the interruption that ended the run (submitted again, it completes)
  interrupted: { states: ['RUNNING', 'COMPLETED'], files },
  // never submitted before
  fresh: { states: ['RUNNING', 'COMPLETED'], files },
};

let work: Scratch;
beforeAll(() => {
  vi.stubEnv('DISAGG_PROGRESS', 'off');
  work = scratch('jobs-resume');
});
afterAll(() => {
  vi.unstubAllEnvs();
  work.remove();
});

describe('RESUME=1 after a run killed half-way', () => {
  it('reports what was recorded, judges what ended, watches what is in flight, submits the rest again', { timeout: 60_000 }, async () => {
    writeConfigs(work, Object.keys(scripts));
    const settings = settingsFor(work, { DISAGG_BATCH_SIZE: '0' });
    const tests = plannedTests(settings);
    const test = (name: string) => tests.find((t) => t.stem === name)!;
    const scheduler = new RecordingScheduler({ script: (request) => scripts[tests.find((t) => t.id === request.name)!.stem] });

    // ---- run 1, killed half-way: the job manager's own steps, then nothing (no close, no cleanup).
    const ledger = new Ledger(work.outputPath, 'run-1', 'slurm');
    const watcher = new JobWatcher(scheduler, { maxIntervalMs: 50 });
    const jobs = new JobManager({ scheduler, watcher, ledger, settings, gpu: NO_GPU });
    const first = new Map<string, string>();
    for (const name of ['recorded', 'judged', 'running', 'unwatched', 'interrupted']) {
      const job = await jobs.submit(test(name), 0);
      first.set(name, job.jobId);
      if (name === 'recorded' || name === 'judged') {
        const outcome = await jobs.finish(test(name), job);
        expect(outcome.passed).toBe(true);
        if (name === 'recorded') await saveTestResult({ settings, gpu: NO_GPU, test: test(name), run: { ...outcome, jobId: job.jobId, batch: 0, startedAt: 0, endedAt: 1 } });
      }
    }
    recordCancelled(work.outputPath, [{ run: 'run-1', test: test('interrupted').id, job: first.get('interrupted')! }], 'slurm', 'the run was interrupted (SIGINT received)');
    scheduler.cancelNow([first.get('interrupted')!]);
    watcher.close();
    // The cluster went on without a run watching: this job ended.
    scheduler.end(first.get('unwatched')!, 'COMPLETED');

    // ---- what the resumed run plans, test by test
    const actions = await planResume(work.outputPath, 'slurm', tests.map((t) => t.id));
    const kind = (name: string) => {
      const a = actions.get(test(name).id)!;
      return a.kind === 'adopt' ? (a.ended ? 'adopt-ended' : 'adopt-watch') : a.kind;
    };
    expect(Object.fromEntries(Object.keys(scripts).map((n) => [n, kind(n)]))).toEqual({
      recorded: 'recorded', judged: 'adopt-ended', running: 'adopt-watch', unwatched: 'adopt-watch', interrupted: 'submit', fresh: 'submit',
    });
    expect(describeResume(actions)).toBe('RESUME: 1 result(s) already recorded, 2 job(s) still in flight picked up, 1 ended job(s) to judge, 2 test(s) to submit');

    // ---- run 2, RESUME=1, on the same OUTPUT_PATH and the same cluster
    const before = scheduler.timeline.length;
    const { session, log } = await openSession(settingsFor(work, { DISAGG_BATCH_SIZE: '0', RESUME: '1' }), scheduler, 'run-2');
    let runs: Map<string, Awaited<ReturnType<typeof session.run>>>;
    try {
      await session.plan(tests);
      runs = new Map(await Promise.all(tests.map(async (t) => [t.stem, await session.run(t)] as const)));
    } finally {
      await session.close();
    }
    const run2 = scheduler.timeline.slice(before);
    const submitted2 = run2.flatMap((e) => (e.kind === 'submit' ? [e.name] : []));
    const polled2 = new Set(run2.flatMap((e) => (e.kind === 'poll' ? e.jobs : [])));

    expect(submitted2.sort()).toEqual([test('fresh').id, test('interrupted').id].sort());
    expect([...runs].filter(([, r]) => !r.passed).map(([n, r]) => `${n}: ${r.failures.join('; ')}`)).toEqual([]);
    // Recorded: reported as it was, nothing polled, nothing written again.
    expect(runs.get('recorded')).toMatchObject({ alreadyRecorded: true, jobId: first.get('recorded') });
    expect(polled2.has(first.get('recorded')!)).toBe(false);
    // Ended and judged by run 1 but not saved: judged again from its logs and job.json, without polling.
    expect(runs.get('judged')).toMatchObject({ jobId: first.get('judged'), status: { state: 'COMPLETED' } });
    expect(runs.get('judged')!.alreadyRecorded).toBeUndefined();
    expect(polled2.has(first.get('judged')!)).toBe(false);
    // In flight: the same job, watched to its end; the ledger holds each state run 2's polls
    // answered for it, once per change. (Run 1's watcher may or may not have polled the job before
    // it died, which moves the stand-in's script on: what run 2 saw is read back from the timeline.)
    const answered2 = (id: string) => run2.flatMap((e) => (e.kind === 'poll' && e.answered[id] ? [e.answered[id]] : []));
    for (const name of ['running', 'unwatched']) {
      const id = first.get(name)!;
      expect(runs.get(name)!.jobId).toBe(id);
      expect(polled2.has(id)).toBe(true);
      const seen = answered2(id).filter((state, k, all) => k === 0 || state !== all[k - 1]);
      expect(seen.at(-1)).toBe('COMPLETED');
      if (name === 'running') expect(['PENDING', 'RUNNING']).toContain(seen[0]);
      else expect(seen).toEqual(['COMPLETED']);
      expect(readLedger(work.outputPath).filter((e) => e.run === 'run-2' && e.test === test(name).id).map((e) => e.state)).toEqual(['ADOPTED', ...seen]);
    }
    expect(readLedger(work.outputPath).find((e) => e.run === 'run-2' && e.state === 'ADOPTED' && e.test === test('running').id)).toMatchObject({ adoptedFrom: 'run-1' });
    // Interrupted: a new job; the cancelled job's folder was moved aside, not overwritten.
    const again = runs.get('interrupted')!.jobId!;
    expect(again).not.toBe(first.get('interrupted'));
    const logDir = scheduler.request(again).logDir;
    const asideNames = readdirSync(path.dirname(logDir)).filter((f) => f.startsWith(`${path.basename(logDir)}.`));
    expect(asideNames).toHaveLength(1);
    expect(existsSync(path.join(path.dirname(logDir), asideNames[0], 'resolved_config.yaml'))).toBe(true);
    expect(log.join('\n')).toContain(`RESUME: ${test('interrupted').id}: submitting again (its job ${first.get('interrupted')} was cancelled when run run-1 was interrupted)`);
    expect(ledgerStates(work.outputPath, test('fresh').id)[0]).toBe('SUBMITTED');
    // results.json still holds the one record run 1 wrote.
    expect((await readResults(work.outputPath)).records.map((r) => r.testId)).toEqual([test('recorded').id]);
  });
});

describe('planResume: the scheduler kind of the latest job', () => {
  it('a job of another scheduler kind, or a local job left running, is submitted again; a SLURM one is adopted', async () => {
    const out = scratch('jobs-resume-kinds');
    try {
      const local = new Ledger(out.outputPath, 'run-a', 'local');
      const slurm = new Ledger(out.outputPath, 'run-a', 'slurm');
      local.record({ test: 't_local', job: '7', state: 'SUBMITTED', terminal: false, batch: 0, timeoutSec: 60 });
      slurm.record({ test: 't_slurm', job: '8', state: 'SUBMITTED', terminal: false, batch: 0, timeoutSec: 60 });
      const onSlurm = await planResume(out.outputPath, 'slurm', ['t_local', 't_slurm']);
      expect(onSlurm.get('t_local')).toEqual({ kind: 'submit', note: 'its last job 7 ran under the local scheduler' });
      expect(onSlurm.get('t_slurm')).toMatchObject({ kind: 'adopt', job: '8', submitted: { timeoutSec: 60 } });
      const onLocal = await planResume(out.outputPath, 'local', ['t_local']);
      expect(onLocal.get('t_local')).toEqual({ kind: 'submit', note: 'its local job 7 ended with run run-a' });
    } finally {
      out.remove();
    }
  });
});
