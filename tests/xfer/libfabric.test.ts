// The libfabric backend on this machine's real libfabric1 (Debian's), providers shm and tcp: rank
// processes moving a random all-to-all matrix verified byte for byte, nixlbench's sweep with
// `--backend LIBFABRIC`, and the failure paths: a peer that dies or cannot be reached is named and
// nothing hangs, mismatched or broken providers and node-local providers across nodes are refused.
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LibfabricBackend } from '../../runners/xfer/backends/libfabric.ts';
import { PEER_DIED_EXIT_CODE, TransferError } from '../../runners/xfer/errors.ts';
import { allocateHost } from '../../runners/xfer/memory.ts';
import { nodeEntryArgv, spawnLocalRanks, type LocalLaunchOptions } from '../../runners/xfer/local-launch.ts';
import type { Store } from '../../runners/xfer/store.ts';
import { postOutcome } from '../../runners/xfer/native/libfabric.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const selftest = fileURLToPath(new URL('../../runners/xfer/selftest.ts', import.meta.url));
const nodeLocalRank = fileURLToPath(new URL('../fixtures/xfer/node-local-rank.ts', import.meta.url));

async function ranks(n: number, entry: string, args: string[], options: LocalLaunchOptions = {}) {
  const lines: string[] = [];
  const result = await spawnLocalRanks(n, nodeEntryArgv(entry, args), {
    stopAfterMs: 60_000,
    ...options,
    env: { XFER_TIMEOUT_S: '60', ...options.env },
    onLine: (rank, _stream, line) => lines.push(`[rank ${rank}] ${line}`),
  });
  return { ...result, output: lines.join('\n') };
}

describe('a post\'s return code', () => {
  it('posted at 0; posted again later on a full queue (-FI_EAGAIN) or no local port free to connect (-EADDRNOTAVAIL); any other is an error', () => {
    expect(postOutcome(0)).toBe('posted');
    expect(postOutcome(-11)).toBe('again');
    expect(postOutcome(-99)).toBe('again');
    expect(postOutcome(-111)).toBe('error'); // ECONNREFUSED: the peer is not there
    expect(postOutcome(-22)).toBe('error');
  });
});

describe.each([
  { provider: 'shm', n: 3, shards: 2 },
  { provider: 'tcp', n: 3, shards: 1 },
])('libfabric over $provider, $n ranks', ({ provider, n, shards }) => {
  it('moves a random all-to-all matrix with WRITE and READ, verified', async () => {
    const args = ['--backend', 'libfabric', '--fi-provider', provider, '--ops', 'WRITE,READ', '--iters', '2', '--shards', String(shards), '--max-bytes', '2000000'];
    const r = await ranks(n, selftest, args);
    expect(r.output).toMatch(new RegExp(`selftest ok: backend=libfabric op=WRITE ranks=${n} iterations=2 shards=${shards} bytes=\\d+ verified`));
    expect(r.output).toMatch(new RegExp(`selftest ok: backend=libfabric op=READ ranks=${n}`));
    expect(r.ok, r.output).toBe(true);
  });

  it('runs nixlbench\'s sweep as `--backend LIBFABRIC`, every byte verified', async () => {
    const argv = ['sweep', '--backend', 'LIBFABRIC', '--ranks', '2', '--check_consistency', '--op_type', 'READ,WRITE', '--max_block_size', '1M', '--num_iter', '8', '--warmup_iter', '2', '--large_blk_iter_ftr', '2'];
    const r = await execa('node', ['bin/disagg-bench.js', ...argv], { cwd: repo, env: { FI_PROVIDER: provider, XFER_TIMEOUT_S: '60' }, reject: false, all: true, timeout: 110_000 });
    expect(r.all).toMatch(/Consistency check passed: every transferred byte verified in all 18 steps/);
    expect(r.all).toMatch(/^1048576 +1 +\d+\.\d{6} /m);
    expect(r.exitCode, r.all).toBe(0);
  });
});

describe.each(['shm', 'tcp'])('libfabric %s, one process', (provider) => {
  it('several execute() calls in flight at once complete on their own, every byte where it belongs', async () => {
    const store = { deadRanks: new Set<number>() } as unknown as Store;
    const backend = new LibfabricBackend({ rank: 0, worldSize: 1, localRank: 0, localWorldSize: 1, node: 'here', store, device: -1 }, { provider });
    const owner = { job: 'libfabric-test', rank: 0, node: 'here' };
    const [src, dst] = ['src', 'dst'].map((name) => allocateHost(name, 4 << 20, owner));
    try {
      src.write(0, Uint8Array.from({ length: 4 << 20 }, (_, i) => (i * 7 + (i >> 12)) & 0xff));
      dst.fill(0);
      const regions = new Map([src, dst].map((r) => [r.name, { descriptor: r.descriptor(), extras: backend.register(r) }]));
      await backend.connect([{ rank: 0, node: 'here', info: backend.localInfo(), regions }]);
      const locals = new Map([src, dst].map((r) => [r.name, r]));
      const block = (i: number, op: 'READ' | 'WRITE', size: number) =>
        op === 'WRITE'
          ? { op, peer: 0, local: 'src', localOffset: i * size, remote: 'dst', remoteOffset: i * size, length: size }
          : { op, peer: 0, local: 'dst', localOffset: i * size, remote: 'src', remoteOffset: i * size, length: size };
      // Plan A writes the first 3 MiB in 48 blocks, plan B reads the last MiB in 16: both at once.
      const a = await backend.prepare(Array.from({ length: 48 }, (_, i) => block(i, 'WRITE', 64 << 10)), locals);
      const b = await backend.prepare(Array.from({ length: 16 }, (_, i) => block(48 + i, 'READ', 64 << 10)), locals);
      const [ra, rb] = await Promise.all([backend.execute(a, { timeoutMs: 30_000 }), backend.execute(b, { timeoutMs: 30_000 })]);
      expect(ra.requests).toHaveLength(48);
      expect(rb.requests).toHaveLength(16);
      for (const t of [...ra.requests, ...rb.requests]) expect(t.doneNs).toBeGreaterThanOrEqual(t.postNs);
      expect(Buffer.compare(Buffer.from(dst.read(0, 4 << 20)), Buffer.from(src.read(0, 4 << 20)))).toBe(0);
    } finally {
      await backend.destroy();
      src.close();
      dst.close();
    }
  });
});

describe('libfabric failures', () => {
  it('a rank that dies mid-transfer makes the others fail naming it, not hang', async () => {
    const r = await ranks(3, selftest, ['--backend', 'libfabric', '--fi-provider', 'tcp', '--ops', 'WRITE', '--die-rank', '2', '--die-at', 'transfer'], { stopAfterMs: 20_000 });
    expect(r.firstFailure).toMatchObject({ rank: 2, code: 3 });
    for (const rank of [0, 1]) {
      expect(r.exits[rank].code, r.output).toBe(PEER_DIED_EXIT_CODE); // failed because rank 2 died
      expect(r.output).toMatch(new RegExp(`\\[rank ${rank}\\] rank ${rank}: \\w+Error: .*rank 2 died`));
    }
  });

  it('a peer that cannot be reached fails the transfer at its deadline, naming the peer', async () => {
    // One process, no rank 1: a store that knows of no death (what a store says when the peer was never there).
    const store = { deadRanks: new Set<number>(), learnIfDead: async () => false } as unknown as Store;
    const backend = new LibfabricBackend({ rank: 0, worldSize: 2, localRank: 0, localWorldSize: 2, node: 'here', store, device: -1 }, { provider: 'tcp' });
    const region = allocateHost('buf', 1 << 16, { job: 'libfabric-test', rank: 0, node: 'here' });
    try {
      const extras = backend.register(region);
      const own = backend.localInfo() as { address: Buffer; provider: string };
      const nobody = Buffer.from(own.address);
      nobody.writeUInt16BE(1, 2); // sockaddr_in port 1: nothing listens there
      await backend.connect([{ rank: 1, node: 'here', info: { ...own, address: nobody }, regions: new Map([['buf', { descriptor: region.descriptor(), extras }]]) }]);
      const plan = await backend.prepare([{ op: 'WRITE', peer: 1, local: 'buf', localOffset: 0, remote: 'buf', remoteOffset: 0, length: 4096 }], new Map([['buf', region]]));
      const failure = await backend.execute(plan, { timeoutMs: 1500 }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(TransferError);
      expect((failure as TransferError).peer).toBe(1);
      expect((failure as Error).message).toMatch(/^libfabric: after 1500 ms: rank 1 not reachable \(tcp;ofi_rxm kept refusing a post: FI_EAGAIN, or no local address free to connect\)/);
    } finally {
      await backend.destroy();
      region.close();
    }
  });

  it('ranks on different providers are refused, naming both', async () => {
    const rankEnv = (rank: number) => ({ FI_PROVIDER: rank === 0 ? 'tcp' : 'sockets' });
    const r = await ranks(2, selftest, ['--backend', 'libfabric', '--ops', 'WRITE'], { rankEnv });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/libfabric: rank 1 uses provider 'sockets', rank 0 'tcp;ofi_rxm': give every rank the same FI_PROVIDER/);
  });

  it('an unknown provider and the broken experimental net provider are refused in one sentence', async () => {
    const unknown = await ranks(1, selftest, ['--backend', 'libfabric', '--fi-provider', 'nosuchfabric']);
    expect(unknown.output).toMatch(/libfabric 1\.\d+: no provider offers RMA on reliable datagram endpoints for provider 'nosuchfabric' \(see `fi_info -t FI_EP_RDM -c FI_RMA`\)/);
    const net = await ranks(1, selftest, ['--backend', 'libfabric', '--fi-provider', 'net']);
    expect(net.output).toMatch(/the experimental 'net' provider reports a WRITE complete before its data has landed .*; use tcp/);
    expect(unknown.ok || net.ok).toBe(false);
  });

  it.each([
    { backend: 'shm', env: {}, refusal: /shm: rank 1 is on node 'node-1', rank 0 on 'node-0': shared memory reaches the same node only \(use ucx\)/ },
    { backend: 'libfabric', env: { FI_PROVIDER: 'shm' }, refusal: /libfabric: rank 1 is on node 'node-1', rank 0 on 'node-0': libfabric's shm provider reaches the same node only \(use libfabric with FI_PROVIDER=tcp, efa or verbs\)/ },
  ])('$backend across nodes is refused before anything is allocated', async ({ backend, env, refusal }) => {
    const r = await ranks(2, nodeLocalRank, [backend], { env, rankEnv: (rank) => ({ XFER_NODE: `node-${rank}` }) });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(refusal);
    expect(r.output).not.toContain('body: allocating');
  });
});
