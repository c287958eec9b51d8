// Nobody else in: the transfer engine's rendezvous store and nixlbench's ASIO beacon admit only
// processes that prove the job's secret (DISAGG_JOB_SECRET, given to the job's processes in their
// environment). A stranger who knows the job id (squeue shows it to every user) is refused before
// anything is answered; a store whose ranks are all on this node listens on loopback only.
import net from 'node:net';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { jobProof, newJobSecret } from '../../runners/common/job-secret.ts';
import { freePort } from '../../runners/common/free-port.ts';
import { StoreTimeoutError } from '../../runners/xfer/errors.ts';
import { openStore, StoreClient, StoreServer } from '../../runners/xfer/store.ts';
import { encodeLine, helloContext } from '../../runners/xfer/store/protocol.ts';
import { rankFromEnv } from '../../runners/xfer/rank.ts';
import { runBench } from './benches/bench-cli.ts';

const servers: StoreServer[] = [];
const clients: StoreClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const s of servers.splice(0)) await s.close(0);
});

/** One line of what `host:port` answers to `line` (undefined: closed without a line). */
function exchange(host: string, port: number, line: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port }, () => socket.write(line));
    let data = '';
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (chunk) => (data += chunk));
    socket.on('close', () => resolve(data || undefined));
    socket.on('error', () => resolve(undefined));
  });
}

const hello = (job: string, proof?: string) => encodeLine({ id: 0, op: 'hello', rank: 1, worldSize: 2, job, ...(proof ? { proof } : {}) });

describe('the rendezvous store with a job secret', () => {
  it('refuses a stranger with the right job id and no or a wrong proof; admits a rank that proves the secret', async () => {
    const secret = newJobSecret();
    const job = 'slurm:4242.0';
    const server = await StoreServer.start({ worldSize: 2, job, ports: [0], host: '127.0.0.1', secret });
    servers.push(server);
    for (const proof of [undefined, jobProof(newJobSecret(), helloContext({ job, rank: 1, worldSize: 2 })), jobProof(secret, helloContext({ job, rank: 0, worldSize: 2 }))]) {
      const reply = JSON.parse((await exchange('127.0.0.1', server.port, hello(job, proof)))!);
      expect(reply).toMatchObject({ ok: false, error: { message: expect.stringMatching(/does not carry job slurm:4242\.0's secret/) } });
    }
    // The ranks themselves, each proving the secret: the store works as ever.
    const ranks = await Promise.all([0, 1].map((rank) => StoreClient.connect({ rank, worldSize: 2, job, endpoints: [{ host: '127.0.0.1', port: server.port }], connectTimeoutMs: 5_000, timeoutMs: 10_000, secret })));
    clients.push(...ranks);
    await ranks[0].set('k', 'v');
    expect(await ranks[1].wait('k', { from: 0 })).toBe('v');
  });

  it('a rank without the secret is refused, saying so, and does not take a rank\'s place', async () => {
    const secret = newJobSecret();
    const server = await StoreServer.start({ worldSize: 2, job: 'j', ports: [0], host: '127.0.0.1', secret });
    servers.push(server);
    // Refused by its own job's store, the rank stops at once: a refusal, not a timeout after the connect timeout's retries.
    const refused = await StoreClient.connect({ rank: 1, worldSize: 2, job: 'j', endpoints: [{ host: '127.0.0.1', port: server.port }], connectTimeoutMs: 120_000, timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(refused).not.toBeInstanceOf(StoreTimeoutError);
    expect((refused as Error).message).toMatch(/^rank 1: cannot reach the store \(rank 0\): 127\.0\.0\.1:\d+: store: this hello does not carry job j's secret/);
    const rank1 = await StoreClient.connect({ rank: 1, worldSize: 2, job: 'j', endpoints: [{ host: '127.0.0.1', port: server.port }], connectTimeoutMs: 5_000, timeoutMs: 5_000, secret });
    clients.push(rank1);
  });

  it('with every rank on this node, the store listens on loopback only', async () => {
    const external = Object.values(os.networkInterfaces()).flat().find((a) => a?.family === 'IPv4' && !a.internal)?.address;
    const info = { ...rankFromEnv({ RANK: '0', WORLD_SIZE: '1', LOCAL_RANK: '0', LOCAL_WORLD_SIZE: '1', XFER_JOB_ID: `loopback-${process.pid}` }) };
    const store = await openStore(info, { skipClockSync: true, drainMs: 0 });
    clients.push(store);
    const port = info.storePorts.find(Boolean)!;
    const reached = async (host: string) => (await Promise.all(info.storePorts.map((p) => exchange(host, p, hello(info.job))))).some((r) => r !== undefined);
    expect(await reached('127.0.0.1')).toBe(true);
    if (external) expect(await reached(external), `the store answered on ${external}:${port}`).toBe(false);
  });
});

describe("nixlbench's ASIO beacon with a job secret", () => {
  const small = ['--max_block_size', '16K', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1'];

  it('answers a stranger with a refusal, not the store\'s address; a process of another job is refused; the job\'s two processes run', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const secret = newJobSecret();
    const args = ['sweep', '--runtime_type', 'ASIO', '--asio_port', String(port), ...small];
    const rank0 = runBench(args, { DISAGG_JOB_SECRET: secret });
    // The beacon is up when it answers anything; a stranger's line gets a refusal, never the job.
    let answer: string | undefined;
    for (let i = 0; i < 300 && answer === undefined; i++) {
      answer = await exchange('127.0.0.1', port, `${JSON.stringify({ proof: null })}\n`);
      if (answer === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(JSON.parse(answer!)).toEqual({ refused: expect.stringContaining("did not prove the job's secret") });
    const stranger = await runBench(args, { DISAGG_JOB_SECRET: newJobSecret() });
    expect(stranger.exitCode).toBe(1);
    expect(stranger.out).toContain(`ASIO runtime: the process at 127.0.0.1:${port} refused this one`);
    const rank1 = await runBench(args, { DISAGG_JOB_SECRET: secret });
    const first = await rank0;
    expect([first.exitCode, rank1.exitCode], first.out + rank1.out).toEqual([0, 0]);
    expect(first.out + rank1.out).not.toContain(secret);
  });
});
