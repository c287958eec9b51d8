// The exit-code policy of every command, in one place (framework/commands/support/exit-code.ts):
// a usage error 2 (an imitated tool's own code where it differs), a bad setting 2, a transfer rank
// that stopped because another rank died 75 (what the rank launchers read), anything else 1.
import { describe, expect, it } from 'vitest';
import { UsageError, DisaggBenchError } from '../../runners/common/errors.ts';
import { PEER_DIED_EXIT_CODE, RankDeadError, TransferError, VerificationError } from '../../runners/xfer/errors.ts';
import { SettingsError } from '../../framework/settings.ts';
import { EXIT_FAILURE, EXIT_USAGE, exitCodeFor } from '../../framework/commands/support/exit-code.ts';

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
