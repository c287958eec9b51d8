// The local launcher: N real rank processes, their output by rank, fail-fast, and the launch command.
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PEER_DIED_EXIT_CODE } from '../../runners/xfer/errors.ts';
import { checkLocalWorld, nodeEntryArgv, spawnLocalRanks } from '../../runners/xfer/local-launch.ts';
import { rankFromEnv } from '../../runners/xfer/rank.ts';
import { segmentPrefix } from '../../runners/xfer/shm-segments.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));

describe('spawnLocalRanks', () => {
  it('gives every rank its identity and the same job id (no MASTER_PORT, not even an inherited one: the store\'s ports derive from the job), and reports output by rank', async () => {
    const lines: string[] = [];
    const script = 'console.log([process.env.RANK, process.env.WORLD_SIZE, process.env.MASTER_ADDR, process.env.MASTER_PORT ?? "none", process.env.XFER_JOB_ID].join(" "))';
    const r = await spawnLocalRanks(3, ['-e', script], { env: { MASTER_PORT: '29400' }, onLine: (rank, stream, line) => lines.push(`${rank} ${stream} ${line}`) });
    expect(r.ok).toBe(true);
    expect(lines).toHaveLength(3);
    const jobs = new Set(lines.map((l) => l.split(' ')[6]));
    expect(jobs.size).toBe(1);
    for (const rank of [0, 1, 2]) expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${rank} stdout ${rank} 3 127\\.0\\.0\\.1 none local:`)));
  });

  it('starts a world whose store\'s first candidate port is taken: rank 0 listens on the next, the others find it', async () => {
    // A service that is not the store takes the job's first candidate port. The derived ports lie in
    // the kernel's ephemeral range, so on a busy machine another socket may hold a job's first port
    // already: the test takes the first job id whose first port it can hold itself.
    const blocker = net.createServer((socket) => socket.destroy());
    let job = '';
    for (let attempt = 0; job === ''; attempt++) {
      const candidate = `local:port-taken-test-${attempt}`;
      const first = rankFromEnv({ RANK: '0', WORLD_SIZE: '2', XFER_JOB_ID: candidate }).storePorts[0];
      const held = await new Promise<boolean>((resolve, reject) => {
        blocker.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' && attempt < 20 ? resolve(false) : reject(err)));
        blocker.listen(first, '0.0.0.0', () => resolve(true));
      });
      blocker.removeAllListeners('error');
      if (held) job = candidate;
    }
    try {
      const entry = path.join(repo, 'tests/fixtures/xfer/store-port-rank.ts');
      const lines: string[] = [];
      const r = await spawnLocalRanks(2, nodeEntryArgv(entry), { env: { XFER_TEST_JOB: job }, onLine: (rank, _stream, line) => lines.push(`${rank} ${line}`) });
      expect(r.ok, lines.join('\n')).toBe(true);
      expect(lines.sort()).toEqual(['0 joined', '1 joined']);
    } finally {
      blocker.close();
    }
  });

  it('stops the other ranks when one fails and they do not', async () => {
    const script = 'if (process.env.RANK === "1") process.exit(4); setTimeout(() => {}, 60000)';
    const r = await spawnLocalRanks(3, ['-e', script], { stopAfterMs: 100, killGraceMs: 2000, onLine: () => {} });
    expect(r.ok).toBe(false);
    expect(r.firstFailure).toEqual({ rank: 1, code: 4, signal: null });
    expect(r.exits.map((e) => e.signal)).toEqual(['SIGTERM', null, 'SIGTERM']);
  });

  it('names the rank that failed on its own, not one that stopped because it died and was reaped first', async () => {
    // Rank 0 plays the rank that saw its peer die and exits first (PEER_DIED_EXIT_CODE); rank 1, the
    // rank that failed, exits after it: what a loaded machine's reaping order can show.
    const script = `if (process.env.RANK === "0") process.exit(${PEER_DIED_EXIT_CODE}); setTimeout(() => process.exit(3), 300)`;
    const r = await spawnLocalRanks(2, ['-e', script], { stopAfterMs: 60_000, onLine: () => {} });
    expect(r.exits).toEqual([{ rank: 0, code: PEER_DIED_EXIT_CODE, signal: null }, { rank: 1, code: 3, signal: null }]);
    expect(r.firstFailure).toEqual({ rank: 1, code: 3, signal: null });
    // With no rank failing on its own, the first failure is still named.
    const alone = await spawnLocalRanks(1, ['-e', `process.exit(${PEER_DIED_EXIT_CODE})`], { onLine: () => {} });
    expect(alone.firstFailure).toEqual({ rank: 0, code: PEER_DIED_EXIT_CODE, signal: null });
  });

  it('removes the shared-memory segments of a rank that died by SIGKILL (no exit hook of its own ran)', async () => {
    const entry = path.join(repo, 'tests/fixtures/xfer/shm-then-die-rank.ts');
    const said: string[] = [];
    const r = await spawnLocalRanks(1, nodeEntryArgv(entry), { onLine: (_rank, stream, line) => stream === 'stdout' && said.push(line), stopAfterMs: 60_000 });
    expect(r.exits.map((e) => e.signal)).toEqual(['SIGKILL']);
    const pids = said.map((line) => /^pid (\d+) segments (\d+)$/.exec(line)).map((m) => {
      expect(m, said.join('\n')).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThan(0); // each held a segment when it died
      return m![1];
    });
    expect(pids).toHaveLength(1);
    expect(readdirSync('/dev/shm').filter((n) => pids.some((pid) => n.startsWith(segmentPrefix(Number(pid)))))).toEqual([]);
  });

  it('runs TypeScript entries through tsx and JavaScript as is', () => {
    expect(nodeEntryArgv('a/b.ts', ['-x'])).toEqual(['--import', 'tsx', 'a/b.ts', '-x']);
    expect(nodeEntryArgv('a/b.mjs')).toEqual(['a/b.mjs']);
  });
});

describe('a world that cannot start here', () => {
  it('--ranks 0 and --ranks 1000 are refused in one sentence, before any rank starts', async () => {
    await expect(spawnLocalRanks(1000, ['-e', 'process.exit(9)'])).rejects.toThrow(/^1000 ranks cannot start on this machine: at most \d+ /);
    expect(() => checkLocalWorld(0)).toThrow(/a world of 0 ranks: expected a whole number of ranks >= 1/);
    const bin = `${repo}bin/disagg-bench.js`;
    for (const [args, says] of [
      [['sweep', '--ranks', '1000'], /^disagg-bench sweep: 1000 ranks cannot start on this machine: at most \d+ \(one process each, 64 MiB or more, \d+ GiB of memory here\); start ranks across nodes with srun or mpirun, or set XFER_MAX_LOCAL_RANKS$/],
      [['ep', '--ranks', '0'], /^disagg-bench ep: --ranks takes a whole number of ranks >= 1, got '0' \(disagg-bench ep --help shows its usage\)$/],
    ] as const) {
      const r = await execa('node', [bin, ...args], { reject: false, all: true, env: { XFER_MAX_LOCAL_RANKS: '' }, timeout: 60_000 });
      expect(r.exitCode, r.all).not.toBe(0);
      expect(String(r.all).trim().split('\n')).toHaveLength(1);
      expect(String(r.all).trim()).toMatch(says);
    }
    const launch = await execa('node', ['--import', 'tsx', 'runners/xfer/launch.ts', '--ranks', '1000', 'runners/xfer/selftest.ts'], { cwd: repo, reject: false, all: true, env: { XFER_MAX_LOCAL_RANKS: '8' }, timeout: 60_000 });
    expect(launch.exitCode).toBe(2);
    expect(launch.all).toMatch(/^launch: 1000 ranks cannot start on this machine: at most 8 /);
  });
});

describe('launch command', () => {
  it('exits with the failed rank exit code and names it', async () => {
    const r = await execa(
      'node',
      ['--import', 'tsx', 'runners/xfer/launch.ts', '--ranks', '2', 'runners/xfer/selftest.ts', '--ops', 'WRITE', '--die-rank', '1', '--die-at', 'connect'],
      { cwd: repo, reject: false, all: true, env: { XFER_TIMEOUT_S: '30' }, timeout: 60_000 },
    );
    expect(r.exitCode).toBe(3);
    expect(r.all).toMatch(/launch: rank 1 failed \(exit code 3\)/);
    expect(r.all).toMatch(/\[rank 0\] rank 0: RankDeadError: .*rank 1 died/);
    expect(r.all).toMatch(new RegExp(`exits: ${PEER_DIED_EXIT_CODE} 3$`, 'm')); // rank 0 stopped because rank 1 died
  });
});
