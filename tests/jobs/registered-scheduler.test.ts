// The scheduler seam, proved from outside: a scheduler written in one file outside
// framework/scheduler/ (tests/fixtures/schedulers/flux.ts, for Flux's commands) is registered by
// this test with one line, chosen with SCHEDULER=flux as a user would, and the jobs layer runs on
// it unchanged; its launcher (flux-run.ts), one more file and line, starts the jobs' ranks:
// submit -> poll -> verdict, a failed job, an interruption (cancelNow), the leftovers
// of a killed run cancelled through the registry, and RESUME adopting a job still running. Flux
// is not installed here: its commands are a STAND-IN (tests/fixtures/schedulers/flux-standin.mjs)
// that plays the states each test scripts and runs nothing. Each test decides from what was
// recorded (the stand-in's calls.log, the ledger, the verdicts), never from timing.
// Like session-unit.test.ts, the interruption emits 'disconnect' in this worker: this file keeps a
// worker of its own (Vitest's default isolation).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerScheduler, unregisterScheduler } from '../../framework/scheduler/registry.ts';
import { registerLauncher, unregisterLauncher } from '../../framework/scheduler/launch/registry.ts';
import { schedulerKind } from '../../framework/scheduler/create.ts';
import { RunSession } from '../../framework/jobs/session.ts';
import { Ledger, readLedger } from '../../framework/jobs/ledger.ts';
import { cancelLeftovers, cancelLeftoversNow, leftoverJobs } from '../../framework/jobs/leftover-jobs.ts';
import { planResume } from '../../framework/jobs/resume.ts';
import { JOB_SCRIPT_FILE, testLogDir } from '../../framework/scheduler/log-folder.ts';
import { FLUX_FIXTURE, FluxScheduler, fluxDefinition } from '../fixtures/schedulers/flux.ts';
import { fluxRunLauncher } from '../fixtures/schedulers/flux-run.ts';
import { GOLDEN_NIXLBENCH_LOG, NIXLBENCH_LOG, NO_GPU, lastLedgerLine, plannedTests, scratch, settingsFor, writeConfigs, type Scratch } from '../fixtures/jobs/run-harness.ts';

const fluxBin = path.resolve(import.meta.dirname, '../fixtures/schedulers/flux-bin');
const completed = { state: 'INACTIVE', result: 'COMPLETED', returncode: 0 };

const scratches: Scratch[] = [];
const sessions: RunSession[] = [];
let standinDir: string;

beforeAll(() => {
  registerScheduler(fluxDefinition); // the one registration line
  registerLauncher(fluxRunLauncher); // and its launcher's
  vi.stubEnv('DISAGG_PROGRESS', 'off');
  vi.stubEnv('PATH', `${fluxBin}${path.delimiter}${process.env.PATH ?? ''}`);
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => {
  unregisterScheduler(FLUX_FIXTURE);
  unregisterLauncher(fluxRunLauncher.name);
  vi.unstubAllEnvs();
  for (const s of scratches) s.remove();
});

/** A WORK_DIR with the named nixl configs, a fresh stand-in state, and each job's script for the stand-in. */
function workWith(names: string[], scripts: Record<string, object>): Scratch {
  const work = scratch('flux-jobs');
  scratches.push(work);
  writeConfigs(work, names);
  standinDir = path.join(work.root, 'flux-standin');
  mkdirSync(path.join(standinDir, 'scripts'), { recursive: true });
  vi.stubEnv('FLUX_STANDIN_DIR', standinDir);
  for (const [name, script] of Object.entries(scripts)) writeFileSync(path.join(standinDir, 'scripts', `nixl_perf_${name}.json`), JSON.stringify(script));
  return work;
}

const fluxCalls = () => readFileSync(path.join(standinDir, 'calls.log'), 'utf8').trim().split('\n');

async function open(work: Scratch, env: Record<string, string> = {}) {
  const settings = settingsFor(work, { SCHEDULER: FLUX_FIXTURE, ...env });
  const tests = plannedTests(settings);
  // No scheduler handed in: the session makes one from SCHEDULER through the registry.
  const session = await RunSession.open({ settings, gpu: NO_GPU, runId: 'run-flux', log: () => {}, stuckAfterInterruptMs: 0 });
  sessions.push(session);
  await session.plan(tests);
  return { settings, tests, session, byName: (n: string) => tests.find((t) => t.stem === n)! };
}

describe('a scheduler registered from outside framework/scheduler', () => {
  it('SCHEDULER=<its name> chooses it; with SCHEDULER unset it is chosen only where its command is found', () => {
    expect(schedulerKind({ debugMode: false, scheduler: FLUX_FIXTURE })).toBe(FLUX_FIXTURE);
    expect(schedulerKind({ debugMode: false, scheduler: undefined }, { PATH: '/nonexistent' })).toBe('local');
  });

  it('runs tests to their verdicts: one passes with its metrics, one fails with its stderr; the ledger names it', async () => {
    const work = workWith(['ok', 'bad'], {
      ok: { states: ['SCHED', 'RUN', completed], files: { [NIXLBENCH_LOG]: GOLDEN_NIXLBENCH_LOG } },
      bad: { states: ['SCHED', 'RUN', { state: 'INACTIVE', result: 'FAILED', returncode: 1 }], stderr: 'rank 1: CUDA error: an illegal memory access\n' },
    });
    const { session, byName, settings } = await open(work);
    expect(session.scheduler.name).toBe(FLUX_FIXTURE);
    const [ok, bad] = await Promise.all([session.run(byName('ok')), session.run(byName('bad'))]);
    expect(ok.failures).toEqual([]);
    expect(ok.passed).toBe(true);
    expect(ok.metrics.some((m) => m.name === 'BW_GBPS')).toBe(true);
    expect(ok.jobId).toMatch(/^f[1-9A-Za-z]+$/);
    expect(bad.passed).toBe(false);
    expect(bad.status).toMatchObject({ state: 'FAILED', exitCode: 1 });
    expect(bad.failures.join('\n')).toContain('an illegal memory access');
    const ledger = readLedger(settings.outputPath);
    expect(new Set(ledger.map((e) => e.scheduler))).toEqual(new Set([FLUX_FIXTURE]));
    expect(lastLedgerLine(settings.outputPath, byName('ok').id)).toMatchObject({ state: 'COMPLETED', terminal: true });
    // Submitted with Flux's flags; one `flux jobs` asks about every job in flight.
    expect(fluxCalls().filter((c) => c.startsWith('submit '))).toHaveLength(2);
    expect(fluxCalls().find((c) => c.startsWith('submit '))).toMatch(/--time-limit=300s .*--output=.*slurm-\{\{id\}\}\.out/);
    expect(fluxCalls().some((c) => c.startsWith('jobs ') && c.split(' ').filter((w) => /^f[1-9A-Za-z]+$/.test(w)).length === 2)).toBe(true);
    // The jobs start their 2 ranks on 2 nodes with the scheduler's launcher, never srun.
    const script = readFileSync(path.join(testLogDir(settings.outputPath, byName('ok').id), JOB_SCRIPT_FILE), 'utf8');
    expect(script).toMatch(/^flux run -N 2 -n 2 --tasks-per-node 1 "\$NODE_BIN" \S*disagg-bench\.js\S* nixl-tool .* >"\$RANK_LOG" 2>&1 \|\| status=\$\?$/m);
    expect(script).not.toMatch(/\bsrun\b/);
  });

  it('an interruption cancels its jobs at once through the scheduler\'s cancelNow (flux cancel) and records them', async () => {
    const work = workWith(['long'], { long: { states: ['SCHED', 'RUN'] } });
    const { session, byName, settings } = await open(work);
    const run = session.run(byName('long'));
    await vi.waitUntil(() => lastLedgerLine(settings.outputPath, byName('long').id)?.state === 'RUNNING', { timeout: 60_000, interval: 20 });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      process.emit('disconnect');
    } finally {
      stderr.mockRestore();
    }
    const result = await run;
    expect(result.interrupted).toMatch(/^the run was interrupted \(the Vitest main process is gone/);
    expect(fluxCalls()).toContain(`cancel ${result.jobId}`);
    expect(lastLedgerLine(settings.outputPath, byName('long').id)).toMatchObject({ scheduler: FLUX_FIXTURE, state: 'CANCELLED', interrupted: true });
  });

  it('a killed run\'s jobs: RESUME adopts the one still running; cleanup cancels through the registry and RESUME then submits again', async () => {
    const work = workWith([], { held: { states: ['SCHED', 'RUN'] }, held2: { states: ['SCHED', 'RUN'] } });
    const { outputPath } = work;
    const flux = new FluxScheduler();
    const ledger = new Ledger(outputPath, 'run-killed', FLUX_FIXTURE);
    const jobs: Record<string, string> = {};
    for (const test of ['nixl_perf_held', 'nixl_perf_held2']) {
      const logDir = testLogDir(outputPath, test);
      jobs[test] = await flux.submit({ name: test, scriptPath: '/bin/true', logDir, workDir: work.workDir, resources: { nodes: 1, ntasks: 1, timeLimitSec: 300 } });
      ledger.record({ test, job: jobs[test], state: 'SUBMITTED', terminal: false, batch: 0, logDir, timeoutSec: 600 });
      ledger.record({ test, job: jobs[test], state: 'RUNNING', terminal: false });
    }
    // Flux's jobs outlive their run (its capabilities), so they are leftovers and RESUME adopts them.
    expect(leftoverJobs(outputPath).map((e) => e.job).sort()).toEqual(Object.values(jobs).sort());
    expect((await planResume(outputPath, FLUX_FIXTURE, ['nixl_perf_held'])).get('nixl_perf_held')).toMatchObject({ kind: 'adopt', job: jobs.nixl_perf_held });

    // Vitest's main process on a signal (synchronous), then `disagg-bench cleanup`: no scheduler handed in.
    const now = cancelLeftoversNow(outputPath, 'run-killed', 'interrupted by a test');
    expect(now.failure).toBeUndefined();
    expect(now.cancelled.map((e) => e.job).sort()).toEqual(Object.values(jobs).sort());
    expect(fluxCalls()).toContain(`cancel ${Object.values(jobs).join(' ')}`);
    expect(leftoverJobs(outputPath)).toEqual([]);
    expect(await cancelLeftovers(outputPath, { reason: 'cleanup by a test' })).toMatchObject({ cancelled: [], ended: [] });
    const resume = await planResume(outputPath, FLUX_FIXTURE, ['nixl_perf_held']);
    expect(resume.get('nixl_perf_held')).toMatchObject({ kind: 'submit', note: expect.stringMatching(/was cancelled when run run-killed was interrupted/) });
  });
});
