// Real rank processes on this machine (the local launcher, as `--ranks N` does): a random matrix of
// sizes moved all-to-all with shm and ucx, READ and WRITE, verified byte for byte; and the failure
// paths: a rank that dies, a rank that never starts, a flipped byte, ranks on different nodes.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PEER_DIED_EXIT_CODE } from '../../runners/xfer/errors.ts';
import { spawnLocalRanks, nodeEntryArgv, type LocalLaunchOptions } from '../../runners/xfer/local-launch.ts';

const selftest = fileURLToPath(new URL('../../runners/xfer/selftest.ts', import.meta.url));

async function run(ranks: number, args: string[], options: LocalLaunchOptions = {}) {
  const lines: string[] = [];
  const result = await spawnLocalRanks(ranks, nodeEntryArgv(selftest, args), {
    ...options,
    env: { XFER_TIMEOUT_S: '60', UCX_NET_DEVICES: 'lo', ...options.env },
    onLine: (rank, _stream, line) => lines.push(`[rank ${rank}] ${line}`),
  });
  return { ...result, output: lines.join('\n') };
}

describe.each([
  { backend: 'shm', ranks: 2, shards: 1 },
  { backend: 'shm', ranks: 4, shards: 3 },
  { backend: 'shm', ranks: 8, shards: 1 },
  { backend: 'ucx', ranks: 2, shards: 2 },
  { backend: 'ucx', ranks: 4, shards: 1 },
  { backend: 'ucx', ranks: 8, shards: 1 },
])('$backend, $ranks ranks', ({ backend, ranks, shards }) => {
  it('moves a random all-to-all matrix with WRITE and READ, verified', async () => {
    const r = await run(ranks, ['--backend', backend, '--ops', 'WRITE,READ', '--iters', '2', '--shards', String(shards), '--seed', String(ranks)]);
    expect(r.output).toMatch(new RegExp(`selftest ok: backend=${backend} op=WRITE ranks=${ranks} iterations=2 shards=${shards} bytes=\\d+ verified`));
    expect(r.output).toMatch(new RegExp(`selftest ok: backend=${backend} op=READ ranks=${ranks}`));
    expect(r.ok, r.output).toBe(true);
  });
});

describe('failures', () => {
  it('a rank that dies mid-run makes the others fail naming it, not hang', async () => {
    const r = await run(4, ['--backend', 'ucx', '--ops', 'WRITE', '--die-rank', '2', '--die-at', 'transfer'], { stopAfterMs: 20_000 });
    expect(r.ok).toBe(false);
    expect(r.firstFailure).toMatchObject({ rank: 2, code: 3 });
    for (const rank of [0, 1, 3]) {
      expect(r.exits[rank].code, r.output).toBe(PEER_DIED_EXIT_CODE); // failed because rank 2 died
      expect(r.output).toMatch(new RegExp(`\\[rank ${rank}\\] rank ${rank}: \\w+Error: .*rank 2 died`));
    }
  });

  it('a rank that never starts makes the others time out naming it', async () => {
    // The limit leaves the three ranks that do start room to start a few seconds apart on a loaded machine.
    // Each rank's limit runs from its own start: the launcher waits long enough for the last to end.
    const r = await run(4, ['--backend', 'shm'], { only: [0, 1, 2], env: { XFER_TIMEOUT_S: '15' }, stopAfterMs: 30_000 });
    expect(r.exits.map((e) => e.code)).toEqual([1, 1, 1]);
    expect(r.output).toMatch(/\[rank 0\] rank 0: StoreTimeoutError: rank 0: all-gather 'xfer-connect#0' timed out after 15 s: rank 3 never arrived \(rank 3 never connected to the store\)/);
  });

  it('a flipped byte is caught by verification, with its offset', async () => {
    const r = await run(2, ['--backend', 'shm', '--ops', 'WRITE', '--flip-byte-rank', '1']);
    expect(r.firstFailure?.rank).toBe(1);
    expect(r.output).toMatch(/\[rank 1\] rank 1: VerificationError: rank 1: WRITE verification failed: region 'recv' offset \d+ .*expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2}/);
  });

  it('ranks on different nodes: shm refuses with the reason, ucx works', async () => {
    const rankEnv = (rank: number) => ({ XFER_NODE: `node-${rank % 2}` });
    const shm = await run(2, ['--backend', 'shm'], { rankEnv });
    expect(shm.ok).toBe(false);
    expect(shm.output).toMatch(/shm: rank 1 is on node 'node-1', rank 0 on 'node-0': shared memory reaches the same node only \(use ucx\)/);
    const ucx = await run(2, ['--backend', 'ucx', '--ucx-tls', 'tcp'], { rankEnv });
    expect(ucx.ok, ucx.output).toBe(true);
  });
});
