// The exit-code policy of every command, in one place (framework/commands/support/exit-code.ts):
// a usage error 2 (an imitated tool's own code where it differs), a bad setting 2, a transfer rank
// that stopped because another rank died 75 (what the rank launchers read), anything else 1.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { categoryOf, DisaggBenchError, EnvironmentError, FailureError, InputError, InternalError, UsageError } from '../../runners/common/errors.ts';
import { EXIT_PEER_DIED, exitCodeOfError, signalExitCode } from '../../runners/common/exit-codes.ts';
import { SchedulerError } from '../../framework/scheduler/scheduler.ts';
import { ConfigError } from '../../framework/config/issue.ts';
import { PEER_DIED_EXIT_CODE, RankDeadError, TransferError, VerificationError } from '../../runners/xfer/errors.ts';
import { SettingsError } from '../../framework/settings.ts';
import { EXIT_FAILURE, EXIT_USAGE, exitCodeFor } from '../../framework/commands/support/exit-code.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('exitCodeFor', () => {
  it('a usage error: 2, but 1 for sweep (nixlbench: gflags exits 1 on a flag it does not know)', () => {
    expect(exitCodeFor('list', new UsageError('unknown option "--x"', 'x'))).toBe(EXIT_USAGE);
    expect(exitCodeFor('serve-bench', new UsageError('--model is required'))).toBe(2);
    expect(exitCodeFor('ct-perftest', new UsageError('bad'))).toBe(2);
    expect(exitCodeFor('sweep', new UsageError("unknown command line flag 'x'"))).toBe(1);
  });

  it('a bad setting: 2, as a run refuses it', () => {
    expect(exitCodeFor('list', new SettingsError(['SCHEDULER="pbs": expected one of the registered schedulers']))).toBe(2);
  });

  it('75 only for a rank that failed because another rank died', () => {
    expect(exitCodeFor('ep', new RankDeadError('rank 1 died', [1]))).toBe(PEER_DIED_EXIT_CODE);
    expect(exitCodeFor('sweep', new TransferError('ucx: transfer with rank 1 failed: rank 1 died', 'ucx', 1, [1]))).toBe(PEER_DIED_EXIT_CODE);
    expect(exitCodeFor('sweep', new TransferError('ucx: transfer with rank 1 failed: timeout', 'ucx', 1))).toBe(EXIT_FAILURE);
    expect(exitCodeFor('kvpipe', new VerificationError('WRITE verification failed', 0, 1, 2))).toBe(1);
  });

  it('anything else: 1', () => {
    expect(exitCodeFor('report', new DisaggBenchError('cannot read results.json', { file: 'results.json' }))).toBe(1);
    expect(exitCodeFor('report', 'a string')).toBe(1);
  });
});

describe('error categories: what a caller catches, and the one exit-code table', () => {
  it('each class says its category; the category alone decides the exit code', () => {
    const cases: Array<[Error, string, number]> = [
      [new UsageError('bad'), 'usage', EXIT_USAGE],
      [new SettingsError(['SCHEDULER="x": expected slurm']), 'usage', EXIT_USAGE],
      [new InputError("'12Q' is not a size"), 'input', EXIT_FAILURE],
      [new EnvironmentError('no free port'), 'environment', EXIT_FAILURE],
      [new InternalError('called out of order'), 'internal', EXIT_FAILURE],
      [new FailureError('the test failed'), 'failure', EXIT_FAILURE],
      [new SchedulerError('sbatch failed', 'sbatch'), 'environment', EXIT_FAILURE],
      [new ConfigError([]), 'input', EXIT_FAILURE],
      [new RankDeadError('rank 1 died', [1]), 'peer-died', EXIT_PEER_DIED],
      [new TransferError('timeout', 'ucx', 1), 'failure', EXIT_FAILURE],
      [new TransferError('rank 1 died', 'ucx', 1, [1]), 'peer-died', EXIT_PEER_DIED],
    ];
    for (const [error, category, code] of cases) {
      expect(categoryOf(error), error.name).toBe(category);
      expect(exitCodeOfError(error), error.name).toBe(code);
    }
    expect(categoryOf(new Error('not ours'))).toBe('failure');
    expect(signalExitCode('SIGINT')).toBe(130);
    expect(signalExitCode('SIGTERM')).toBe(143);
  });

  it('no throw in framework/ or runners/ names the root class: each names one with a category', () => {
    const bare = (dir: string): string[] => readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) return bare(rel);
      return e.name.endsWith('.ts') && /new DisaggBenchError\(/.test(readFileSync(path.join(root, rel), 'utf8')) ? [rel] : [];
    });
    // The job watcher and the history store are others' to change; their errors keep the root class for now.
    const notYet = ['framework/scheduler/watcher.ts'];
    expect([...bare('framework'), ...bare('runners')].filter((f) => !notYet.includes(f) && !f.startsWith('framework/history/'))).toEqual([]);
  });
});
