// The rendezvous store over real TCP on loopback: one server, one client per rank, in this process.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RankDeadError, StoreTimeoutError } from '../../runners/xfer/errors.ts';
import { StoreClient, StoreServer } from '../../runners/xfer/store.ts';
import { encodeLine } from '../../runners/xfer/store/protocol.ts';

const open: { servers: StoreServer[]; clients: StoreClient[]; others: net.Server[] } = { servers: [], clients: [], others: [] };

afterEach(async () => {
  for (const c of open.clients.splice(0)) await c.close().catch(() => {});
  for (const s of open.servers.splice(0)) await s.close(0);
  for (const o of open.others.splice(0)) await new Promise((r) => o.close(r));
});

async function world(size: number, connect: number[] = [...Array(size).keys()], job = 'test-job') {
  const server = await StoreServer.start({ worldSize: size, job, ports: [0], host: '127.0.0.1' });
  open.servers.push(server);
  const clients = await Promise.all(connect.map((rank) => client(rank, size, server.port, job)));
  return { server, clients };
}

async function client(rank: number, worldSize: number, port: number, job = 'test-job', timeoutMs = 60_000) {
  const c = await StoreClient.connect({ rank, worldSize, job, endpoints: [{ host: '127.0.0.1', port }], connectTimeoutMs: 2_000, timeoutMs });
  open.clients.push(c);
  return c;
}

describe('store', () => {
  it('sets, gets and waits for keys, Buffers included', async () => {
    const { clients } = await world(2);
    const [a, b] = clients;
    expect(await a.get('missing')).toBeUndefined();
    const waited = b.wait<{ handle: Buffer }>('desc', { from: 0 });
    await a.set('desc', { handle: Buffer.from([0, 1, 2, 255]) });
    const got = await waited;
    expect(Buffer.isBuffer(got.handle)).toBe(true);
    expect([...got.handle]).toEqual([0, 1, 2, 255]);
    expect(await b.get('desc')).toEqual({ handle: Buffer.from([0, 1, 2, 255]) });
  });

  it('all-gathers and all-to-alls by rank, repeatedly under one name', async () => {
    const { clients } = await world(3);
    for (let round = 0; round < 2; round++) {
      const gathered = await Promise.all(clients.map((c) => c.allGather('g', { rank: c.rank, round })));
      for (const g of gathered) expect(g).toEqual([0, 1, 2].map((rank) => ({ rank, round })));
    }
    const received = await Promise.all(clients.map((c) => c.allToAll('a2a', [0, 1, 2].map((to) => `${c.rank}->${to}`))));
    received.forEach((fromEach, me) => expect(fromEach).toEqual([0, 1, 2].map((from) => `${from}->${me}`)));
  });

  it('runs barriers over a subset of ranks without the others', async () => {
    const { clients } = await world(4);
    await Promise.all([clients[1], clients[3]].map((c) => c.barrier('pair', { ranks: [3, 1] })));
    const gathered = await Promise.all([clients[0], clients[2]].map((c) => c.allGather('evens', c.rank * 10, { ranks: [0, 2] })));
    expect(gathered[0][0]).toBe(0);
    expect(gathered[0][2]).toBe(20);
    expect(gathered[0][1]).toBeUndefined();
  });

  it('names the ranks that never arrived when a barrier times out', async () => {
    const { clients } = await world(4, [0, 1, 2]);
    // Both waits fail in the same moment: take both rejections at once (none left unhandled).
    const errors = await Promise.all(clients.slice(0, 2).map((c) => c.barrier('x', { timeoutMs: 300 }).catch((e: unknown) => e)));
    for (const err of errors) {
      expect(err).toBeInstanceOf(StoreTimeoutError);
      expect((err as StoreTimeoutError).missingRanks).toEqual([2, 3]);
      expect((err as Error).message).toMatch(/barrier 'x' timed out after 0\.3 s: ranks 2, 3 never arrived \(rank 3 never connected to the store\)/);
    }
    // The barrier failed for everyone: a late arrival gets the same error at once.
    await expect(clients[2].barrier('x', { timeoutMs: 60_000 })).rejects.toThrow(/ranks 2, 3 never arrived.*rank 2 arrived late/);
  });

  it('fails waiters at once when a rank they need drops, naming it', async () => {
    const { clients } = await world(3);
    const [a, b, c] = clients;
    const barrier = a.barrier('b', { timeoutMs: 60_000 });
    const key = a.wait('from-c', { from: 2, timeoutMs: 60_000 });
    const notified = new Promise<number>((resolve) => b.onRankDead((rank) => resolve(rank)));
    (c as unknown as { socket: net.Socket }).socket.destroy(); // rank 2 dies: no goodbye
    await expect(barrier).rejects.toThrow(RankDeadError);
    await expect(barrier).rejects.toThrow(/barrier 'b': rank 2 died before arriving \(its store connection was lost\)/);
    await expect(key).rejects.toThrow(/wait for key 'from-c': rank 2 died/);
    expect(await notified).toBe(2);
    expect(b.deadRanks.has(2)).toBe(true);
    await expect(b.allGather('after', 1)).rejects.toThrow(/rank 2 died/);
  });

  it('a rank that dies after arriving fails the collective for the others at once, naming it', async () => {
    const { clients } = await world(4);
    const [a, b, c] = clients;
    // Ranks 0 and 2 are at the barrier, rank 3 is still busy; rank 2 then dies. Without this the
    // others would wait for rank 3 (which would leave because of rank 2's death) and name rank 3.
    const waits = [a, c].map((x) => x.barrier('done', { timeoutMs: 60_000 }).catch((e: unknown) => e));
    // A round trip on each waiter's own connection: the store has read its arrival (one socket, in order).
    await Promise.all([a, c].map((x) => x.get('sync')));
    (c as unknown as { socket: net.Socket }).socket.destroy(); // rank 2 dies: no goodbye
    const [errA] = await Promise.all(waits);
    expect(errA).toBeInstanceOf(RankDeadError);
    expect((errA as Error).message).toMatch(/barrier 'done': rank 2 died after arriving \(its store connection was lost\)/);
    await expect(b.barrier('done', { timeoutMs: 60_000 })).rejects.toThrow(/rank 2 died after arriving.*rank 1 arrived late/);
  });

  it('a rank that says goodbye while a collective waits for it fails that collective at once, not at its limit', async () => {
    const { clients } = await world(3);
    const [a, b, c] = clients;
    const waits = [a, b].map((x) => x.barrier('never', { timeoutMs: 60_000 }).catch((e: unknown) => e));
    await Promise.all([a, b].map((x) => x.get('sync'))); // the store has read both arrivals
    await c.close(); // rank 2 leaves (it failed on its own, say) without arriving
    for (const err of await Promise.all(waits)) {
      expect(err).toBeInstanceOf(RankDeadError);
      expect((err as Error).message).toMatch(/barrier 'never': rank 2 left the store without arriving/);
    }
  });

  it('a hello the rank gave up on (answered too late, connection dropped) is not its death: its retry joins', async () => {
    const { server, clients } = await world(2, [0]);
    const [a] = clients;
    const barrier = a.barrier('joined', { timeoutMs: 60_000 });
    // What a rank does when the store answers its hello after the rank stopped waiting: it drops
    // that connection without attaching and says hello again on a new one.
    const gaveUp = net.connect({ host: '127.0.0.1', port: server.port });
    gaveUp.write(encodeLine({ id: 0, op: 'hello', rank: 1, worldSize: 2, job: 'test-job' }));
    const answer = await new Promise<string>((resolve) => gaveUp.once('data', (d) => resolve(d.toString())));
    expect(JSON.parse(answer.split('\n')[0])).toMatchObject({ id: 0, ok: true });
    const closed = new Promise((resolve) => gaveUp.once('close', resolve));
    gaveUp.end();
    await closed;
    const b = await client(1, 2, server.port);
    await Promise.all([barrier, b.barrier('joined', { timeoutMs: 60_000 })]);
    expect(a.deadRanks.has(1)).toBe(false);
    const gathered = await Promise.all([a.allGather('after', 'a'), b.allGather('after', 'b')]);
    expect(gathered).toEqual([['a', 'b'], ['a', 'b']]);
  });

  it('a stale hello read after the rank\'s retry is turned away; the retry\'s connection, once attached, tells of its death', async () => {
    const { server, clients } = await world(2, [0]);
    const [a] = clients;
    const say = async (attempt: number) => {
      const socket = net.connect({ host: '127.0.0.1', port: server.port });
      const answered = new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString().split('\n')[0])));
      socket.write(encodeLine({ id: 0, op: 'hello', rank: 1, worldSize: 2, job: 'test-job', attempt }));
      return { socket, answer: JSON.parse(await answered) };
    };
    const retry = await say(2);
    expect(retry.answer).toMatchObject({ ok: true });
    const stale = await say(1);
    expect(stale.answer.error.message).toBe('store: rank 1 already said hello again (attempt 2, this is 1)');
    stale.socket.destroy();
    const notified = new Promise<number>((resolve) => a.onRankDead((rank) => resolve(rank)));
    retry.socket.write(encodeLine({ id: 0, op: 'attach' }));
    retry.socket.destroy(); // rank 1 dies after attaching: no goodbye
    expect(await notified).toBe(1);
    await expect(a.barrier('after', { timeoutMs: 60_000 })).rejects.toThrow(/rank 1 died before arriving \(its store connection was lost\)/);
  });

  it('turns away a client of another job and takes the next port when one is taken', async () => {
    const squatter = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    open.others.push(squatter);
    const taken = (squatter.address() as net.AddressInfo).port;
    const server = await StoreServer.start({ worldSize: 1, job: 'mine', ports: [taken, 0], host: '127.0.0.1' });
    open.servers.push(server);
    expect(server.port).not.toBe(taken);
    const endpoints = [taken, server.port].map((port) => ({ host: '127.0.0.1', port }));
    const ok = await StoreClient.connect({ rank: 0, worldSize: 1, job: 'mine', endpoints, connectTimeoutMs: 2_000, timeoutMs: 1_000 });
    open.clients.push(ok);
    await ok.barrier('alone');
    const err = await StoreClient.connect({ rank: 0, worldSize: 1, job: 'other', endpoints, connectTimeoutMs: 300, timeoutMs: 1_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(StoreTimeoutError);
    expect((err as Error).message).toMatch(/cannot reach the store.*store of job 'mine' \(1 ranks\), not 'other'/);
  });

  it('estimates the clock offset to rank 0 within half a round trip (same machine: true offset 0)', async () => {
    const { clients } = await world(2);
    const { offsetNs, rttNs } = await clients[1].syncClock(8);
    expect(rttNs).toBeGreaterThan(0);
    expect(Math.abs(offsetNs)).toBeLessThanOrEqual(rttNs / 2 + 1);
    expect(clients[1].toRank0Ns(1000)).toBe(1000 + offsetNs);
  });
});
