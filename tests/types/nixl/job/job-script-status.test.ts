// What a nixl job says when its ranks fail: the step's exit status, its meaning where it has one,
// and the tail of the ranks' log. The ranks' step is a stand-in `srun` (first on PATH) that prints
// two rank lines and exits with the status under test: which status real srun returns for which
// rank exits is tested against the local shim in tests/scheduler/local-srun.test.ts.
import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PEER_DIED_EXIT_CODE } from '../../../../runners/xfer/errors.ts';
import { nixlConfig } from '../../../../framework/types/nixl/common.ts';
import { renderNixlJobScript } from '../../../../framework/types/nixl/job/job-script.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'nixl-job-status-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const standinSrun = `#!/usr/bin/env bash
# stand-in for srun: the ranks' lines, then the status under test
echo '[rank 0] rank 0: RankDeadError: rank 0: barrier: rank 1 died before arriving'
echo '[rank 1] rank 1: VerificationError: rank 1: WRITE verification failed'
exit "$STANDIN_STATUS"
`;

const bin = path.join(dir, 'bin');
mkdirSync(bin);
writeFileSync(path.join(bin, 'srun'), standinSrun);
chmodSync(path.join(bin, 'srun'), 0o755);

async function runJob(status: number) {
  const logDir = path.join(dir, `logs-${status}`);
  const config = nixlConfig({ metadata: { test_type: 'nixl' }, benchmark: { kind: 'selftest', ranks: 2, backend: 'shm' } });
  const script = renderNixlJobScript({ testId: 'nixl_perf_status', config, logDir, packageRoot: '/pkg', rank: { argv: ['selftest'], logFile: 'ranks.log' } });
  const file = path.join(dir, `job-${status}.sh`);
  writeFileSync(file, script);
  return execa('bash', [file], { reject: false, env: { PATH: `${bin}:${process.env.PATH}`, STANDIN_STATUS: String(status) } });
}

describe('a nixl job whose ranks fail', () => {
  it(`says what status ${PEER_DIED_EXIT_CODE} means (ranks that lost a peer), and exits with the step's status`, async () => {
    const r = await runJob(PEER_DIED_EXIT_CODE);
    expect(r.exitCode).toBe(PEER_DIED_EXIT_CODE);
    expect(r.stderr).toMatch(/^the ranks failed \(exit code 75: ranks that stopped because another rank ended first; that rank names its own error in the log\); last 40 lines of .*ranks\.log:$/m);
    expect(r.stderr).toMatch(/rank 1: VerificationError/);
  });

  it('gives any other status as it is', async () => {
    for (const status of [1, 143]) {
      const r = await runJob(status);
      expect(r.exitCode).toBe(status);
      expect(r.stderr).toMatch(new RegExp(`^the ranks failed \\(exit code ${status}\\); last 40 lines of `, 'm'));
    }
  });
});
