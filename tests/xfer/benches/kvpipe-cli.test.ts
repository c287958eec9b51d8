// `disagg-bench kvpipe` run for real: more bytes than the buffer (the sender waits for the
// receiver), a slow receiver respected, the receiver catching overwrites when the sender ignores
// its credits (test hook), and two separately started processes (the seed's two terminals).
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { extractLmcacheMetrics } from '../../../framework/metrics/extractors/lmcache.ts';
import { runBench } from './bench-cli.ts';
import { freePort } from '../../../runners/common/free-port.ts';

const pipe = ['kvpipe', '--buffer-size', '16M', '--num-objs', '12', '--obj-size', '2M'];
const waits = (out: string) => [...out.matchAll(/wait for receiver: ([\d.]+) ms/g)].map((m) => Number(m[1]));

describe('disagg-bench kvpipe', { concurrent: true }, () => {
  it('sends 24 MiB through a 16 MiB buffer in 2 commits, every object verified, GB/s and GiB/s stated', async () => {
    const r = await runBench([...pipe, '--num-rounds', '2']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toContain('Transfer buffer: 16777216 bytes (16 MiB), 8 objects per commit');
    expect(r.out.match(/Committing write with 8 transfers/g)).toHaveLength(2);
    expect(r.out.match(/Committing write with 4 transfers/g)).toHaveLength(2);
    expect(r.out.match(/All data verified successfully!/g)).toHaveLength(2);
    expect(r.out).toMatch(/Pure transfer throughput: [\d.]+ GB\/s \([\d.]+ GiB\/s\)/);
    const { metrics, problems } = extractLmcacheMetrics(r.out);
    expect(problems).toEqual([]);
    expect(metrics.find((m) => m.name === 'VERIFIED_ROUNDS')?.value).toBe(2);
  });

  it('a receiver that holds each commit 1 s: the next commit waits for it, nothing is overwritten', async () => {
    const r = await runBench([...pipe, '--test-receiver-delay-ms', '1000']);
    expect(r.exitCode, r.out).toBe(0);
    const [first, second] = waits(r.out);
    expect(first).toBeLessThan(second); // the second commit had to wait for the ring to be freed
    // The receiver held the ring 1 s from about when the first commit was made; the sender's wait
    // starts after its own work in between, so the bound leaves it 0.5 s (not a speed goal).
    expect(second).toBeGreaterThanOrEqual(500);
    expect(r.out).toContain('All data verified successfully!');
  });

  it('a sender that ignores the credits overwrites unread objects, and the receiver says which', async () => {
    // the receiver holds each commit 3 s: the sender's next commit lands on unread objects first
    // (the sender has those 3 s to make it, a loaded machine included)
    const r = await runBench([...pipe, '--test-ignore-credits', '--test-receiver-delay-ms', '3000']);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/Data mismatch in round 1: object 0 \(round 0\) byte \d+: .*that tile holds object 8 of round 0, tile 0: another object overwrote it/);
    expect(r.out).toContain('Receiver reported a verification failure in round 1');
  });

  it('sender and receiver started separately meet through --master-addr/--master-port', async () => {
    const port = String(await freePort());
    const [receiver, sender] = await Promise.all([
      runBench([...pipe, '--role', 'receiver', '--master-port', port]),
      runBench([...pipe, '--role', 'sender', '--master-port', port, '--simulate-work', '--work-scale', '0.1']),
    ]);
    expect(receiver.exitCode, receiver.out).toBe(0);
    expect(sender.exitCode, sender.out).toBe(0);
    expect(receiver.out).toContain('Received all 12 objects');
    expect(sender.out).toMatch(/Sent 12 objects in [\d.]+ seconds/);
  });

  it("--simulate-workload (LMCache channel v2): 50 ms after each batch, left out of the timed throughput; --simulate-work is not it", async () => {
    const r = await runBench([...pipe, '--batch-size', '3', '--simulate-workload']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out.match(/Sent batch \d\/4 in [\d.]+ seconds/g)).toHaveLength(4);
    const m = /Simulated workload: 4 x 50 ms after the batches, ([\d.]+) of the round's ([\d.]+) seconds, left out of the time below/.exec(r.out);
    expect(m, r.out).not.toBeNull();
    const [slept, wall] = [Number(m![1]), Number(m![2])];
    expect(slept).toBeGreaterThanOrEqual(0.19); // four sleeps of 50 ms happened (timers never fire much early)
    const sent = Number(/Sent 12 objects in ([\d.]+) seconds/.exec(r.out)![1]);
    expect(sent).toBeCloseTo(wall - slept, 5); // the round's time without the sleeps
    const work = await runBench([...pipe, '--batch-size', '3', '--simulate-work', '--work-scale', '0.1']);
    expect(work.exitCode, work.out).toBe(0);
    expect(work.out).not.toMatch(/Sent batch|Simulated workload/);
  });

  it("LMCache's --host/--port: the receiver listens there and the sender connects", async () => {
    const port = await freePort();
    const receiver = runBench([...pipe, '--role', 'receiver', '--host', '127.0.0.1', '--port', String(port)]);
    // the receiver alone serves the rendezvous at --port (the sender is not started yet)
    await expect.poll(() => new Promise((resolve) => net.connect(port, '127.0.0.1').once('connect', function (this: net.Socket) { this.destroy(); resolve(true); }).once('error', () => resolve(false))), { timeout: 30_000, interval: 200 }).toBe(true);
    const sender = await runBench([...pipe, '--role', 'sender', '--host', '127.0.0.1', '--port', String(port)]);
    const r = await receiver;
    expect([sender.exitCode, r.exitCode], sender.out + r.out).toEqual([0, 0]);
    expect(r.out).toContain('All data verified successfully!');
    const bad = await runBench([...pipe, '--host', '127.0.0.1']);
    expect(bad.out).toContain('--host/--port name the receiver when sender and receiver are started on their own (--role sender|receiver)');
  });
});

