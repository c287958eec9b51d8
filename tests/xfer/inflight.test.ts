// Many requests in flight: plans posted without waiting complete on their own, a later one before
// an earlier one when its bytes are there first. Decided from what the engine recorded (post and
// completion order, requests in flight), never from timings: each case is built so that the
// overtaking is forced (worker-thread copies vs an inline copy; a peer that cannot progress).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { XferEngine } from '../../runners/xfer/engine.ts';
import { nodeEntryArgv, spawnLocalRanks } from '../../runners/xfer/local-launch.ts';
import { checkPattern, fillPattern, poisonPattern } from '../../runners/xfer/pattern.ts';
import { rankFromEnv } from '../../runners/xfer/rank.ts';
import { openStore } from '../../runners/xfer/store.ts';
import { pipeline } from '../../runners/xfer/benches/sweep/sweep-pipeline.ts';
import { SweepLane } from '../../runners/xfer/benches/sweep/sweep-lane.ts';
import type { BackendOptions } from '../../runners/xfer/backends/registry.ts';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function single(backend: 'shm' | 'ucx', options: BackendOptions = {}): Promise<XferEngine> {
  const info = rankFromEnv({ XFER_JOB_ID: `inflight-test-${backend}-${process.pid}` });
  const store = await openStore(info, { timeoutMs: 20_000 });
  cleanup.push(() => store.close(0));
  const engine = await XferEngine.create({ backend, rank: info, store, ...options });
  cleanup.push(() => engine.destroy());
  return engine;
}

const write = (localOffset: number, remoteOffset: number, length: number) =>
  ({ op: 'WRITE', peer: 0, local: 'src', localOffset, remote: 'dst', remoteOffset, length }) as const;

describe('requests in flight', () => {
  it('shm: a small plan posted after a large one completes first, and both arrive intact', async () => {
    // Two copy threads: the 16 MiB request goes to worker threads, the 4 KiB one is copied at its post.
    const engine = await single('shm', { shm: { threads: 2 } });
    const big = 16 << 20;
    const src = engine.allocate('src', big + 4096);
    const dst = engine.allocate('dst', big + 4096);
    await engine.connect();
    const stream = { sender: 0, receiver: 0, iteration: 3 };
    fillPattern(src, 0, big + 4096, stream);
    poisonPattern(dst, 0, big + 4096, stream);
    // Both plans prepared first, then posted in one tick: the large copy cannot end between the posts.
    const [largePlan, smallPlan] = [await engine.prepare([write(0, 0, big)]), await engine.prepare([write(big, big, 4096)])];
    const large = engine.post(largePlan);
    const small = engine.post(smallPlan);
    expect(small.inFlightAtPost).toBe(2);
    await Promise.all([large.done, small.done]);
    expect([large.postSeq, small.postSeq]).toEqual([0, 1]);
    expect([small.doneSeq, large.doneSeq]).toEqual([0, 1]);
    expect(engine.inFlightRecord()).toEqual({ posted: 2, completed: 2, maxInFlight: 2, overtakes: 1 });
    expect(checkPattern(dst, 0, big + 4096, stream)).toBeUndefined();
  });

  it("the sweep's pipeline keeps pipeline_depth requests in flight and posts each iteration once", async () => {
    const engine = await single('shm');
    engine.allocate('src', 4 * 8192);
    engine.allocate('dst', 4 * 8192);
    await engine.connect();
    const plans = await Promise.all([0, 1, 2, 3].map((s) => engine.prepare([write(s * 8192, s * 8192, 8192)])));
    const slots = plans.map((plan) => ({ post: async () => ({ done: engine.post(plan).done }) }));
    const seen: number[] = [];
    await pipeline(slots, 22, false, (r) => seen.push(r.bytes));
    expect(seen).toHaveLength(22);
    expect(engine.inFlightRecord()).toMatchObject({ posted: 22, completed: 22, maxInFlight: 4 });
    // Two-sided backends post in a fixed order (every rank alike): same count, same window.
    await pipeline(slots.slice(0, 3), 10, true);
    expect(engine.inFlightRecord()).toMatchObject({ posted: 32, completed: 32, maxInFlight: 4 });
  });

  it("each pipeline slot runs the lane's lifecycle: with --reregister_mem a slot is rebuilt and registered again as its request completes", async () => {
    const engine = await single('ucx', { ucx: { tls: 'tcp' } });
    const src = engine.allocate('src', 2 * 8192);
    const dst = engine.allocate('dst', 2 * 8192);
    await engine.connect();
    const register = vi.spyOn(engine.backend, 'register');
    const deregister = vi.spyOn(engine.backend, 'deregister');
    const prepare = vi.spyOn(engine, 'prepare');
    const slots = [0, 1].map((s) => new SweepLane(engine, [write(s * 8192, s * 8192, 8192)], undefined, { recreateXfer: true, reregisterMem: true }));
    for (const slot of slots) await slot.prepare();
    const stream = { sender: 0, receiver: 0, iteration: 9 };
    fillPattern(src, 0, 2 * 8192, stream);
    poisonPattern(dst, 0, 2 * 8192, stream);
    await pipeline(slots, 6, false);
    // one build per request (2 first builds, 4 rebuilds), each registering its block and releasing it after
    expect([prepare.mock.calls.length, register.mock.calls.length, deregister.mock.calls.length]).toEqual([6, 6, 6]);
    // A slot is posted again as its request completes, so how the 6 builds split between the two
    // slots depends on which completes first; each slot is built at least once, 6 in all.
    const builds = slots.map((slot) => slot.prepUs.length);
    expect(builds[0] + builds[1]).toBe(6);
    expect(Math.min(builds[0], builds[1])).toBeGreaterThanOrEqual(1);
    expect(engine.inFlightRecord()).toMatchObject({ posted: 6, completed: 6 });
    expect(engine.inFlightRecord().maxInFlight).toBeLessThanOrEqual(2);
    expect(checkPattern(dst, 0, 2 * 8192, stream)).toBeUndefined();
    // two-sided order: slots post in turn, each rebuild before the next slot posts
    await pipeline(slots, 4, true);
    expect(prepare.mock.calls.length).toBe(10);
    expect(engine.inFlightRecord()).toMatchObject({ posted: 10, completed: 10 });
    expect(engine.inFlightRecord().maxInFlight).toBeLessThanOrEqual(2);
  });

  it('ucx: per peer, shared memory on this node and the network to another; a READ from a peer that cannot progress is overtaken by a later WRITE', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ucx-overtake-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const lines: string[] = [];
    const fixture = fileURLToPath(new URL('../fixtures/xfer/ucx-overtake-rank.ts', import.meta.url));
    const result = await spawnLocalRanks(2, nodeEntryArgv(fixture, [dir]), {
      env: { XFER_TIMEOUT_S: '60', XFER_UCX_ERROR_HANDLING: undefined, XFER_UCX_MEMORY: undefined, XFER_UCX_FLAGS: undefined },
      rankEnv: (rank) => ({ XFER_NODE: `pretend-node-${rank}` }),
      onLine: (rank, _stream, line) => lines.push(`[rank ${rank}] ${line}`),
    });
    const output = lines.join('\n');
    expect(result.ok, output).toBe(true);
    const json = lines.find((l) => l.startsWith('[rank 0] {'));
    expect(json, output).toBeDefined();
    const r = JSON.parse(json!.slice('[rank 0] '.length));
    // 'auto': no error handling towards itself (same node), peer error handling towards rank 1.
    expect(r.modes).toEqual({ 0: 'none', 1: 'peer' });
    expect(r.readInFlightWhenWriteDone).toBe(true);
    expect(r.write).toMatchObject({ postSeq: 2, inFlightAtPost: 2 });
    expect(r.read.doneSeq).toBeGreaterThan(r.write.doneSeq);
    expect(r.record).toMatchObject({ maxInFlight: 2, overtakes: 1 });
  });
});
