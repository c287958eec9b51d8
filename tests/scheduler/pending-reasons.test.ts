// Submitting from a login node: each pending job's reason, as SLURM gives it, comes back from the
// one status command of a poll and reaches the live progress. On the real local cluster, with
// reasons SLURM sets whatever else the shared queue holds: a held job (JobHeldUser) and one that
// may not start before a time (BeginTime).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SlurmScheduler } from '../../framework/scheduler/slurm.ts';
import { ProgressBoard, type ProgressStream } from '../../framework/results/progress.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'pending-reasons-'));
const submitted: string[] = [];
let slurm: SlurmScheduler | undefined;
afterAll(async () => {
  if (slurm && submitted.length) await slurm.cancel(submitted);
  rmSync(dir, { recursive: true, force: true });
});

describeCluster('pending reasons', () => {
  it('one status command per poll answers every job, each pending one with its own reason, and the progress line shows it', { timeout: 120_000 }, async () => {
    slurm = new SlurmScheduler({ env: clusterEnv(), retryBaseDelayMs: 100 });
    const scriptPath = path.join(dir, 'job.sh');
    writeFileSync(scriptPath, '#!/bin/bash\ntrue\n', { mode: 0o755 });
    const submit = (name: string, extraArgs: string[]) =>
      slurm!.submit({ name, scriptPath, logDir: path.join(dir, name), workDir: dir, resources: { nodes: 1, ntasks: 1, timeLimitSec: 60, extraArgs } });
    const held = await submit('held', ['--hold']);
    const later = await submit('later', ['--begin=now+3600']);
    submitted.push(held, later);
    const before = slurm.commandsIssued.status;
    await slurm.statusSource(); // the one-off probe of which command answers, outside the count
    const probes = slurm.commandsIssued.probe;
    const statuses = await slurm.poll([held, later]);
    expect(slurm.commandsIssued.status - before).toBe(1);
    expect(slurm.commandsIssued.probe).toBe(probes);
    expect(statuses.get(held)).toMatchObject({ state: 'PENDING', terminal: false, reason: 'JobHeldUser' });
    expect(statuses.get(later)).toMatchObject({ state: 'PENDING', terminal: false, reason: 'BeginTime' });

    const lines: string[] = [];
    const stream: ProgressStream = { isTTY: false, write: (text: string) => lines.push(text) };
    const board = new ProgressBoard({ stream });
    board.waiting('t_held', 1);
    board.start();
    board.submitted('t_held', held);
    board.jobStatus('t_held', statuses.get(held)!);
    board.stop();
    // in the scheduler's queue (SLURM's PENDING): the test is QUEUED, with SLURM's reason
    expect(lines.join('')).toMatch(new RegExp(`QUEUED +t_held +job ${held} \\(JobHeldUser\\)`));
  });
});
