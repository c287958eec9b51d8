// Parsing of the SLURM status commands' output (lines as sacct and squeue print them) and the
// pure parts of the SLURM backend: time limits, sbatch arguments, sbatch's answer, error kinds.
import { DisaggBenchError } from '../../runners/common/errors.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobStatus } from '../../framework/scheduler/scheduler.ts';
import {
  collectStatuses,
  formatSlurmTime,
  parseSacctStatus,
  parseSlurmTime,
  parseSqueueStatus,
  sacctStatusArgs,
  squeueStatusArgs,
} from '../../framework/scheduler/slurm-status.ts';
import { formatTimeLimit, parseSubmitOutput, sbatchArgs, slurmAvailable } from '../../framework/scheduler/slurm.ts';
import { commandError, formatCommand, isTransientFailure, runSlurmCommand } from '../../framework/scheduler/slurm-command.ts';

const t = (text: string) => parseSlurmTime(text)!;

describe('sacct output', () => {
  // Accounting sacct -X -P (steps appear without -X; a reused id shows its older record first).
  const sacct = [
    '123|123|COMPLETED|0:0|None|n1|2026-11-21T15:54:27|2026-11-21T15:54:28',
    '123.batch|123.batch|COMPLETED|0:0||n1|2026-11-21T15:54:27|2026-11-21T15:54:28',
    '124|124|CANCELLED by 0|0:15|None|n[1-2]|2026-11-21T15:54:27|2026-11-21T15:55:00',
    '125_3|128|FAILED|2:0|NonZeroExitCode|n3|2026-11-21T15:54:27|2026-11-21T15:54:29',
    '126+0|126|RUNNING|0:0|None|n4|2026-11-21T15:54:27|Unknown',
    '126+1|127|PENDING|0:0|Resources|None assigned|2026-11-21T16:30:00|Unknown',
    '129|129|PENDING|0:0|QOSMaxWallDurationPerJobLimit|None assigned|Unknown|Unknown',
    '130|130|COMPLETED|0:0|None|n1|2020-01-01T00:00:00|2020-01-01T00:00:01',
    '130|130|OUT_OF_MEMORY|0:125|None|n2|2026-11-21T15:54:27|2026-11-21T15:54:30',
  ].join('\n');

  it('maps each job row and skips steps', () => {
    const statuses = collectStatuses(
      ['123', '124', '125_3', '128', '126', '126+1', '129', '130', '404'],
      parseSacctStatus(sacct),
      new Map<string, JobStatus>(),
    );
    expect([...statuses.keys()].sort()).toEqual(['123', '124', '125_3', '126', '126+1', '128', '129', '130']);
    expect(statuses.get('123')).toEqual({
      id: '123', state: 'COMPLETED', terminal: true, exitCode: 0, nodes: ['n1'],
      startTime: t('2026-11-21T15:54:27'), endTime: t('2026-11-21T15:54:28'),
    });
    expect(statuses.get('124')).toMatchObject({ state: 'CANCELLED', terminal: true, reason: 'by 0', exitCode: 0, signal: 15, nodes: ['n1', 'n2'] });
    expect(statuses.get('125_3')).toMatchObject({ state: 'FAILED', exitCode: 2, reason: 'NonZeroExitCode' });
    expect(statuses.get('128')).toEqual({ ...statuses.get('125_3'), id: '128' });
    // Not finished: no exit code, no end time.
    expect(statuses.get('126')).toEqual({ id: '126', state: 'RUNNING', terminal: false, nodes: ['n4'], startTime: t('2026-11-21T15:54:27') });
    // Pending: the start time is an estimate, not reported.
    expect(statuses.get('126+1')).toEqual({ id: '126+1', state: 'PENDING', terminal: false, reason: 'Resources' });
    expect(statuses.get('129')).toMatchObject({ state: 'PENDING', cannotStart: 'QOSMaxWallDurationPerJobLimit' });
    expect(statuses.get('130')).toMatchObject({ state: 'OUT_OF_MEMORY', nodes: ['n2'] });
  });

  it('honours the PREEMPTED setting', () => {
    const line = '140|140|PREEMPTED|0:15|None|n1|2026-11-21T15:54:27|2026-11-21T15:54:30';
    expect(parseSacctStatus(line)[0].status).toMatchObject({ state: 'PREEMPTED', terminal: false });
    expect(parseSacctStatus(line)[0].status.endTime).toBeUndefined();
    expect(parseSacctStatus(line, { preemptedIsTerminal: true })[0].status).toMatchObject({ terminal: true, signal: 15 });
  });

  it('builds the one command for many jobs', () => {
    expect(sacctStatusArgs(['1', '2', '3'])).toEqual(['-X', '-P', '-n', '-j', '1,2,3', '-o', 'JobID,JobIDRaw,State,ExitCode,Reason,NodeList,Start,End']);
    const since = new Date(2026, 10, 21, 9, 5, 7).getTime();
    expect(sacctStatusArgs(['1'], since).slice(-2)).toEqual(['-S', '2026-11-21T09:05:07']);
  });
});

describe('squeue output', () => {
  // squeue -h -t all -O JobID:|,ArrayJobID:|,ArrayTaskID:|,HetJobID:|,HetJobOffset:|,State:|,Reason:|,exit_code:|,NodeList:|,StartTime:|,EndTime:|
  const squeue = [
    '3|3|N/A|N/A|N/A|CANCELLED|None|15|n1|2026-11-21T15:54:27|2026-11-21T15:54:29|',
    '2|2|N/A|N/A|N/A|FAILED|NonZeroExitCode|768|n1|2026-11-21T15:54:27|2026-11-21T15:54:27|',
    '6|4|1|N/A|N/A|COMPLETED|None|0|n2|2026-11-21T15:54:27|2026-11-21T15:54:28|',
    '4|4|2-3|N/A|N/A|PENDING|ReqNodeNotAvail, UnavailableNodes:n3|0||2027-11-21T16:02:53|NONE|',
    '9|9|N/A|9|0|RUNNING|None|0|n[3-4]|2026-11-21T15:54:27|2026-11-21T16:54:27|',
  ].join('\n');

  it('maps wait statuses, array and het ids, and never-start reasons', () => {
    const statuses = collectStatuses(['3', '2', '6', '4_1', '4', '4_[2-3]', '9', '9+0'], parseSqueueStatus(squeue), new Map());
    expect(statuses.get('3')).toMatchObject({ state: 'CANCELLED', exitCode: 0, signal: 15 });
    expect(statuses.get('2')).toMatchObject({ state: 'FAILED', exitCode: 3, reason: 'NonZeroExitCode', nodes: ['n1'] });
    expect(statuses.get('4_1')).toMatchObject({ id: '4_1', state: 'COMPLETED', nodes: ['n2'] });
    expect(statuses.get('4')).toEqual({
      id: '4', state: 'PENDING', terminal: false, reason: 'ReqNodeNotAvail, UnavailableNodes:n3', cannotStart: 'ReqNodeNotAvail',
    });
    expect(statuses.get('4_[2-3]')).toMatchObject({ state: 'PENDING' });
    // Running: the expected end time is not an end.
    expect(statuses.get('9')).toEqual({ id: '9', state: 'RUNNING', terminal: false, nodes: ['n3', 'n4'], startTime: t('2026-11-21T15:54:27') });
    expect(statuses.get('9+0')).toEqual({ ...statuses.get('9'), id: '9+0' });
  });

  it('asks for every state, so finished jobs the controller remembers are reported', () => {
    const args = squeueStatusArgs(['7', '8']);
    expect(args.slice(0, 5)).toEqual(['-h', '-t', 'all', '-j', '7,8']);
    expect(args[6]).toContain('exit_code:|');
  });
});

describe('times', () => {
  it('reads and writes SLURM local times', () => {
    expect(parseSlurmTime('2026-11-21T15:54:27')).toBe(new Date(2026, 10, 21, 15, 54, 27).getTime());
    for (const none of ['Unknown', 'None', 'N/A', '', undefined]) expect(parseSlurmTime(none)).toBeUndefined();
    const ms = new Date(2026, 0, 2, 3, 4, 5).getTime();
    expect(parseSlurmTime(formatSlurmTime(ms))).toBe(ms);
  });

  it('formats sbatch --time from seconds', () => {
    expect(formatTimeLimit(60)).toBe('00:01:00');
    expect(formatTimeLimit(90.2)).toBe('00:01:31');
    expect(formatTimeLimit(3600 * 5 + 7)).toBe('05:00:07');
    expect(formatTimeLimit(86_400 * 2 + 3661)).toBe('2-01:01:01');
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => formatTimeLimit(bad)).toThrow(DisaggBenchError);
  });
});

describe('sbatch', () => {
  const request = {
    name: 'disagg/perf/case 1',
    scriptPath: '/w/job.sh',
    logDir: '/w/logs',
    workDir: '/w',
    resources: {
      nodes: 2, ntasks: 8, ntasksPerNode: 4, cpusPerTask: 2, gpusPerNode: 4, timeLimitSec: 3600,
      partition: 'gpu', account: 'proj', extraArgs: ['--exclusive', '--comment=a b'],
    },
    env: { SECRET: 'not on the command line' },
  };

  it('builds one argument per option, the script last, env kept off the command line', () => {
    expect(sbatchArgs(request)).toEqual([
      '--parsable', '--job-name=disagg/perf/case 1', '--partition=gpu', '--account=proj', '--time=01:00:00',
      '--nodes=2', '--ntasks=8', '--ntasks-per-node=4', '--cpus-per-task=2', '--gres=gpu:4',
      '--output=/w/logs/slurm-%j.out', '--error=/w/logs/slurm-%j.err', '--chdir=/w', '--export=ALL',
      '--exclusive', '--comment=a b', '/w/job.sh',
    ]);
    expect(sbatchArgs(request).join(' ')).not.toContain('not on the command line');
    const minimal = sbatchArgs({ ...request, resources: { nodes: 1, ntasks: 1, timeLimitSec: 60, gpusPerNode: 0 } });
    expect(minimal.some((arg) => /^--(partition|account|gres|ntasks-per-node|cpus-per-task)/.test(arg))).toBe(false);
    expect(() => sbatchArgs({ ...request, resources: { ...request.resources, ntasks: 1.5 } })).toThrow(/ntasks must be a positive integer/);
  });

  it('a blank or unfilled <partition> / <account> is the cluster default: no option; a real one is trimmed', () => {
    const args = (partition: string, account: string) => sbatchArgs({ ...request, resources: { ...request.resources, partition, account } }).filter((a) => /^--(partition|account)/.test(a));
    expect(args('<partition>', ' <account> ')).toEqual([]);
    expect(args('  ', '')).toEqual([]);
    expect(args(' gpu ', 'proj')).toEqual(['--partition=gpu', '--account=proj']);
  });

  it('reads the job id out of what sbatch prints', () => {
    expect(parseSubmitOutput('42')).toBe('42');
    expect(parseSubmitOutput('42;cluster-a\n')).toBe('42');
    expect(parseSubmitOutput('sbatch: warning: something\n43')).toBe('43');
    expect(parseSubmitOutput('Submitted batch job 44')).toBe('44');
    expect(parseSubmitOutput('')).toBeUndefined();
    expect(parseSubmitOutput('error')).toBeUndefined();
  });
});

describe('SLURM commands', () => {
  const outcome = (stderr: string) => ({ command: 'sbatch x', ok: false, stdout: '', stderr, exitCode: 1 });

  it('tells transient failures from permanent ones', () => {
    for (const transient of [
      'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)',
      'sbatch: error: Batch job submission failed: Socket timed out on send/recv operation',
      'sbatch: error: Batch job submission failed: Resource temporarily unavailable',
      'slurm_load_jobs error: Zero Bytes were transmitted or received',
      'error: slurm_receive_msg: Connection reset by peer',
    ]) expect(isTransientFailure(outcome(transient)), transient).toBe(true);
    for (const permanent of [
      'sbatch: error: Batch job submission failed: Requested node configuration is not available',
      'sbatch: error: Batch job submission failed: Invalid partition name specified',
      'sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified',
      '',
    ]) expect(isTransientFailure(outcome(permanent)), permanent).toBe(false);
  });

  it('runs argument arrays, reports a missing command and a failing one with context', async () => {
    const missing = await runSlurmCommand('sbatch-that-does-not-exist', ['a b'], { timeoutMs: 5000 });
    expect(missing).toMatchObject({ ok: false, failure: 'sbatch-that-does-not-exist not found on PATH' });
    expect(isTransientFailure(missing)).toBe(false);

    const failing = await runSlurmCommand('bash', ['-c', 'echo line1 >&2; echo "it broke; really" >&2; exit 7'], { timeoutMs: 30_000 });
    expect(failing).toMatchObject({ ok: false, exitCode: 7, stderr: 'line1\nit broke; really' });
    const error = commandError(failing, 'the test command', 3);
    expect(error).toMatchObject({ exitCode: 7, stderr: 'line1\nit broke; really', command: formatCommand('bash', ['-c', 'echo line1 >&2; echo "it broke; really" >&2; exit 7']) });
    expect(error.message).toMatch(/^the test command failed \(after 3 attempts\): exit code 7\n {2}command: bash -c 'echo line1/);

    const slow = await runSlurmCommand('sleep', ['5'], { timeoutMs: 100 });
    expect(slow).toMatchObject({ ok: false, failure: 'timed out after 100 ms' });
  });

  it('reports an argument spawn refuses outright as a failed outcome, never a rejection', async () => {
    const refused = await runSlurmCommand('sbatch', ['a\u0000b'], { timeoutMs: 5000 });
    expect(refused).toMatchObject({ ok: false, stdout: '', stderr: '' });
    expect(refused.failure).toMatch(/null bytes/i);
  });

  it('quotes arguments for display only where needed', () => {
    expect(formatCommand('scancel', ['1', '2'])).toBe('scancel 1 2');
    expect(formatCommand('sbatch', ["--job-name=it's x"])).toBe(`sbatch '--job-name=it'\\''s x'`);
  });

  it('finds sbatch on PATH or says it is not there', () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'sbatch-path-'));
    try {
      fs.writeFileSync(path.join(bin, 'sbatch'), '#!/bin/sh\n', { mode: 0o755 });
      expect(slurmAvailable({ PATH: `/nonexistent${path.delimiter}${bin}` })).toBe(true);
      fs.chmodSync(path.join(bin, 'sbatch'), 0o644);
      expect(slurmAvailable({ PATH: bin })).toBe(false);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
    expect(slurmAvailable({ PATH: '/nonexistent:' })).toBe(false);
    expect(slurmAvailable({})).toBe(false);
  });
});
