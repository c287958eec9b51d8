// The engine in one process (a world of one rank, transfers to itself), with the real shm and ucx
// backends: regions, plans, READ/WRITE verified, control-plane timing, request checks, availability.
import { afterEach, describe, expect, it } from 'vitest';
import { availableBackends } from '../../runners/xfer/backends/registry.ts';
import type { UcxOptions } from '../../runners/xfer/backends/ucx.ts';
import { XferEngine } from '../../runners/xfer/engine.ts';
import { checkPattern, fillPattern, poisonPattern } from '../../runners/xfer/pattern.ts';
import { rankFromEnv } from '../../runners/xfer/rank.ts';
import { openStore, type Store } from '../../runners/xfer/store.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function single(backend: 'shm' | 'ucx', ucx: UcxOptions = {}): Promise<{ engine: XferEngine; store: Store }> {
  const info = rankFromEnv({ XFER_JOB_ID: `engine-test-${backend}-${process.pid}` });
  const store = await openStore(info, { timeoutMs: 20_000 });
  cleanup.push(() => store.close(0));
  const engine = await XferEngine.create({ backend, rank: info, store, ucx: { tls: 'tcp', ...ucx } });
  cleanup.push(() => engine.destroy());
  return { engine, store };
}

describe.each(['shm', 'ucx'] as const)('engine with %s (one rank, to itself)', (backend) => {
  it('moves WRITE and READ requests at the right offsets, verified byte for byte', async () => {
    const { engine } = await single(backend);
    const src = engine.allocate('src', 200_000);
    const dst = engine.allocate('dst', 200_000);
    await engine.connect();
    const stream = { sender: 0, receiver: 0, iteration: 0 };
    fillPattern(src, 1000, 150_001, stream);
    poisonPattern(dst, 7, 150_001, stream);
    // Three shards of one transfer, written at an offset that differs from the source's.
    const shard = (i: number, op: 'READ' | 'WRITE') =>
      op === 'WRITE'
        ? { op, peer: 0, local: 'src', localOffset: 1000 + i * 50_000, remote: 'dst', remoteOffset: 7 + i * 50_000, length: i === 2 ? 50_001 : 50_000 }
        : { op, peer: 0, local: 'dst', localOffset: 7 + i * 50_000, remote: 'src', remoteOffset: 1000 + i * 50_000, length: i === 2 ? 50_001 : 50_000 };
    const write = await engine.transfer([0, 1, 2].map((i) => shard(i, 'WRITE')));
    expect(write.bytes).toBe(150_001);
    expect(write.requests).toHaveLength(3);
    expect(write.postedNs).toBeGreaterThanOrEqual(write.startNs);
    expect(write.endNs).toBeGreaterThanOrEqual(write.postedNs);
    for (const t of write.requests) expect(t.doneNs).toBeGreaterThanOrEqual(t.postNs);
    expect(checkPattern(dst, 7, 150_001, stream)).toBeUndefined();

    poisonPattern(dst, 7, 150_001, stream);
    await engine.transfer([0, 1, 2].map((i) => shard(i, 'READ')));
    expect(checkPattern(dst, 7, 150_001, stream)).toBeUndefined();
  });

  it('times init, register, connect, disconnect, reconnect and destroy', async () => {
    const { engine } = await single(backend);
    engine.allocate('buf', 4096);
    await engine.connect();
    await engine.reconnect();
    await engine.transfer([{ op: 'WRITE', peer: 0, local: 'buf', localOffset: 0, remote: 'buf', remoteOffset: 2048, length: 2048 }]);
    await engine.disconnect();
    await engine.destroy();
    for (const phase of ['init', 'register', 'connect', 'reconnect', 'disconnect', 'destroy'] as const) {
      expect(engine.controlTimes[phase], phase).toHaveLength(1);
      expect(engine.controlTimes[phase][0]).toBeGreaterThanOrEqual(0);
    }
  });

  it('rejects requests outside a region or to unknown regions and peers, saying which', async () => {
    const { engine } = await single(backend);
    engine.allocate('buf', 1000);
    await engine.connect();
    const base = { op: 'WRITE' as const, peer: 0, local: 'buf', localOffset: 0, remote: 'buf', remoteOffset: 0, length: 10 };
    await expect(engine.prepare([base, { ...base, remoteOffset: 995 }])).rejects.toThrow(
      `${backend}: request 1 (WRITE 10 bytes with rank 0): [995, 1005) is outside region 'buf' of rank 0 (1000 bytes)`,
    );
    await expect(engine.prepare([{ ...base, local: 'nope' }])).rejects.toThrow(/no local region 'nope' \(registered: buf\)/);
    await expect(engine.prepare([{ ...base, remote: 'nope' }])).rejects.toThrow(/rank 0 has no region 'nope' \(it has: buf\)/);
    await expect(engine.prepare([{ ...base, peer: 3 }])).rejects.toThrow(/rank 3 is not connected/);
  });
});

// Over tcp a put or get often stays open after its post: 'flush' completion then frees it and waits
// on the endpoint's flush alone, which must still cover it.
describe.each([
  ['plain', 'each'],
  ['nixl', 'each'],
  ['memh', 'flush'],
  ['nixl', 'flush'],
] as const)('ucx posting with %s, completion %s', (post, completion) => {
  it('moves 64 WRITEs and READs of 64 KiB right, each done after its post and by the end', async () => {
    const { engine } = await single('ucx', { post, completion });
    expect(engine.backend).toMatchObject({ post, completion });
    const size = 64 * 65_536;
    const src = engine.allocate('src', size);
    const dst = engine.allocate('dst', size);
    await engine.connect();
    const stream = { sender: 0, receiver: 0, iteration: 1 };
    const requests = (op: 'READ' | 'WRITE') =>
      Array.from({ length: 64 }, (_, i) =>
        op === 'WRITE'
          ? { op, peer: 0, local: 'src', localOffset: i * 65_536, remote: 'dst', remoteOffset: i * 65_536, length: 65_536 }
          : { op, peer: 0, local: 'dst', localOffset: i * 65_536, remote: 'src', remoteOffset: i * 65_536, length: 65_536 },
      );
    for (const op of ['WRITE', 'READ'] as const) {
      fillPattern(src, 0, size, stream);
      poisonPattern(dst, 0, size, stream);
      const result = await engine.transfer(requests(op));
      expect(checkPattern(dst, 0, size, stream), op).toBeUndefined();
      for (const t of result.requests) {
        expect(t.doneNs).toBeGreaterThanOrEqual(t.postNs);
        expect(t.doneNs).toBeLessThanOrEqual(result.endNs);
      }
    }
  });
});

describe('ucx progress while idle', () => {
  it('uses no CPU while idle after a transfer: the brief progressing after work ends, then it waits on its event fd', async () => {
    const { engine } = await single('ucx');
    engine.allocate('buf', 65_536);
    await engine.connect();
    await engine.transfer([{ op: 'WRITE', peer: 0, local: 'buf', localOffset: 0, remote: 'buf', remoteOffset: 32_768, length: 32_768 }]);
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const used = process.cpuUsage(before);
    // a worker progressed without end would take most of a core for the 400 ms
    expect((used.user + used.system) / 1000).toBeLessThan(150);
  });
});

describe('availableBackends', () => {
  it('reports shm, ucx and libfabric available here, and every unavailable backend with its reason', () => {
    const all = availableBackends();
    expect(all.map((b) => b.name)).toEqual(['shm', 'ucx', 'cuda', 'nccl', 'libfabric']);
    expect(all.find((b) => b.name === 'libfabric')).toMatchObject({ available: true, detail: expect.stringMatching(/^libfabric 1\.\d+$/) });
    expect(all.find((b) => b.name === 'shm')?.available).toBe(true);
    expect(all.find((b) => b.name === 'ucx')).toMatchObject({ available: true, detail: expect.stringMatching(/^UCX \d+\.\d+/) });
    for (const b of all) {
      if (!b.available) expect(b.reason).toMatch(/unavailable: (cudart|nccl)|no CUDA device|cudaGetDeviceCount/);
    }
  });
});
