// Transfer-engine faults beyond tests/xfer/selftest.test.ts (which covers a rank that exits on
// purpose, one that never starts, and a flipped byte on shm): a rank KILLED from outside (SIGKILL,
// no chance to say goodbye) while the ranks loop over transfers, on every backend of the engine
// (backendNames: a backend added there is tested here with no change; one that cannot run on this
// machine, cuda and nccl without a GPU, is skipped saying why), and corruption caught on ucx.
// Real rank processes (the local launcher), real backends. The victim is killed once every rank
// has said it is transferring, not after a guessed delay.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PEER_DIED_EXIT_CODE } from '../../runners/xfer/errors.ts';
import { nodeEntryArgv, spawnLocalRanks } from '../../runners/xfer/local-launch.ts';
import { backendNames } from '../../runners/xfer/backends/types.ts';
import { backendAvailability } from '../../runners/xfer/backends/registry.ts';
import { waitUntil } from '../fixtures/reliability/suite-run.ts';

const selftest = fileURLToPath(new URL('../../runners/xfer/selftest.ts', import.meta.url));

/** Pid of this process's child that runs rank `rank` (its environment says RANK=<rank>). */
function rankPid(rank: number): number | undefined {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const parent = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1];
      if (parent === String(process.pid) && readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`RANK=${rank}`)) return Number(pid);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** GPU backends move GPU memory; the others host memory. */
const memoryOf = (backend: string) => (backend === 'cuda' || backend === 'nccl' ? 'gpu' : 'host');

describe.each(backendNames.map((name) => ({ name, availability: backendAvailability(name) })))('engine faults ($name)', ({ name: backend, availability }) => {
  const skip = availability.available ? '' : ` (skipped: ${availability.reason})`;
  it.skipIf(!availability.available)(`a rank SIGKILLed while transfers run makes every other rank fail on its own within the wait limit, naming it${skip}`, { timeout: 120_000 }, async () => {
    const lines: string[] = [];
    const transferring = new Set<number>();
    const run = spawnLocalRanks(4, nodeEntryArgv(selftest, ['--backend', backend, '--memory', memoryOf(backend), '--ops', 'WRITE', '--iters', '1000000', '--announce-transfers']), {
      env: { XFER_TIMEOUT_S: '20', UCX_NET_DEVICES: 'lo' },
      // Far beyond the ranks' own wait limit: a rank the launcher had to stop would not exit on its own.
      stopAfterMs: 90_000,
      onLine: (rank, _stream, line) => {
        lines.push(`[rank ${rank}] ${line}`);
        if (line === `rank ${rank}: transferring`) transferring.add(rank);
      },
    });
    await waitUntil('every rank to be transferring', () => transferring.size === 4, 60_000);
    process.kill((await waitUntil('the pid of rank 2', () => rankPid(2), 10_000)), 'SIGKILL');
    const result = await run;
    const output = lines.join('\n');
    expect(result.firstFailure, output).toMatchObject({ rank: 2, signal: 'SIGKILL' });
    for (const rank of [0, 1, 3]) {
      expect(result.exits[rank].code, output).toBe(PEER_DIED_EXIT_CODE); // failed because rank 2 died
      expect(output).toMatch(new RegExp(`\\[rank ${rank}\\] rank ${rank}: \\w+Error: .*rank 2 died`));
    }
    expect(output).not.toMatch(/selftest ok/);
  });
});

describe('corruption on ucx', () => {
  it('a flipped byte in a ucx transfer is caught by verification, with its offset', { timeout: 120_000 }, async () => {
    const lines: string[] = [];
    const result = await spawnLocalRanks(2, nodeEntryArgv(selftest, ['--backend', 'ucx', '--ops', 'WRITE', '--flip-byte-rank', '1']), {
      env: { XFER_TIMEOUT_S: '30', UCX_NET_DEVICES: 'lo' },
      onLine: (rank, _stream, line) => lines.push(`[rank ${rank}] ${line}`),
    });
    expect(result.firstFailure?.rank, lines.join('\n')).toBe(1);
    expect(lines.join('\n')).toMatch(/\[rank 1\] rank 1: VerificationError: rank 1: WRITE verification failed: region 'recv' offset \d+ .*expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2}/);
  });
});
