// The one routine that cancels and records what a run left in flight (jobs/leftover-jobs.ts),
// against the real local SLURM cluster: a job that ended unwatched is recorded with its real end
// (RESUME judges it), one still running is cancelled and recorded as cancelled by an interruption
// (RESUME submits its test again). And `disagg-bench cleanup` on an OUTPUT_PATH without a ledger
// says so instead of "nothing to cancel".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmScheduler } from '../../framework/scheduler/slurm.ts';
import { Ledger, readLedger } from '../../framework/jobs/ledger.ts';
import { cancelLeftovers, leftoverJobs } from '../../framework/jobs/leftover-jobs.ts';
import { planResume } from '../../framework/jobs/resume.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leftovers-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const cli = (args: string[], env: Record<string, string>) =>
  execa('node', [path.join(repoRoot, 'bin/disagg-bench.js'), ...args], { env, reject: false, all: true });

describe('disagg-bench cleanup without a ledger', () => {
  it('says the ledger does not exist (exit 1); --missing-ok keeps upstream\'s exit 0', { timeout: 60_000 }, async () => {
    const outputPath = path.join(scratch(), 'mistyped');
    const missing = await cli(['cleanup'], { OUTPUT_PATH: outputPath });
    expect(missing.exitCode, missing.all).toBe(1);
    expect(missing.all).toContain(`no ledger: ${path.join(outputPath, 'ledger.jsonl')} does not exist and ${path.join(outputPath, 'latest')} names no run; no run has written to OUTPUT_PATH=${outputPath}`);
    expect(missing.all).not.toMatch(/nothing to cancel/);
    const ok = await cli(['cleanup', '--missing-ok'], { OUTPUT_PATH: outputPath });
    expect(ok.exitCode, ok.all).toBe(0);
    expect(ok.all).toMatch(/names no run.*--missing-ok: nothing to cancel/);
  });
});

describeCluster('cancelling leftover jobs on the real cluster', () => {
  const submitted: string[] = [];
  afterAll(async () => {
    if (submitted.length) await execa('scancel', submitted, { env: clusterEnv(), reject: false });
  });

  it('records an unwatched job\'s real end, cancels and records the one still running; RESUME then judges one and submits the other', { timeout: 120_000 }, async () => {
    const dir = scratch();
    const outputPath = path.join(dir, 'out');
    const slurm = new SlurmScheduler({ env: clusterEnv(), retryBaseDelayMs: 100 });
    const job = async (name: string, body: string) => {
      const scriptPath = path.join(dir, `${name}.sh`);
      writeFileSync(scriptPath, `#!/bin/bash\n${body}\n`, { mode: 0o755 });
      const logDir = path.join(outputPath, 'slurm_logs', name);
      const id = await slurm.submit({ name, scriptPath, logDir, workDir: dir, resources: { nodes: 1, ntasks: 1, timeLimitSec: 300 } });
      submitted.push(id);
      return { id, logDir };
    };
    // As a killed run left them: both submitted and seen running, then nobody watched.
    const ledger = new Ledger(outputPath, 'run-killed', 'slurm');
    const done = await job('ends', 'true');
    const held = await job('held', 'sleep 300');
    for (const [test, { id, logDir }] of [['t_ends', done], ['t_held', held]] as const) {
      ledger.record({ test, job: id, state: 'SUBMITTED', terminal: false, batch: 0, logDir, timeoutSec: 600 });
      ledger.record({ test, job: id, state: 'RUNNING', terminal: false });
    }
    // Decided from SLURM's own answer, not from a sleep: the short job has ended, the long one has not.
    for (;;) {
      const s = await slurm.poll([done.id, held.id]);
      if (s.get(done.id)?.terminal && s.get(held.id)?.state === 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(leftoverJobs(outputPath).map((e) => e.job).sort()).toEqual([done.id, held.id].sort());

    const outcome = await cancelLeftovers(outputPath, { reason: 'cancelled by a test', scheduler: slurm });
    expect(outcome.failure).toBeUndefined();
    expect(outcome.cancelled.map((e) => e.job)).toEqual([held.id]);
    expect(outcome.ended.map((e) => [e.entry.job, e.status.state])).toEqual([[done.id, 'COMPLETED']]);
    expect(leftoverJobs(outputPath)).toEqual([]);
    const last = (test: string) => readLedger(outputPath).filter((e) => e.test === test).at(-1);
    expect(last('t_held')).toMatchObject({ run: 'run-killed', job: held.id, state: 'CANCELLED', terminal: true, interrupted: true, reason: 'cancelled by a test' });
    expect(last('t_ends')).toMatchObject({ job: done.id, state: 'COMPLETED', terminal: true });
    expect(last('t_ends')!.interrupted).toBeUndefined();
    let end = (await slurm.poll([held.id])).get(held.id);
    while (!end?.terminal) {
      await new Promise((r) => setTimeout(r, 200)); // COMPLETING first
      end = (await slurm.poll([held.id])).get(held.id);
    }
    expect(end.state).toBe('CANCELLED');

    const resume = await planResume(outputPath, 'slurm', ['t_ends', 't_held']);
    expect(resume.get('t_held')).toMatchObject({ kind: 'submit' });
    expect(resume.get('t_ends')).toMatchObject({ kind: 'adopt', job: done.id, ended: { state: 'COMPLETED' } });
  });
});
