// `disagg-bench ep` run for real on local ranks: all modes verified on every rank, the control
// plane tables, and a corrupted byte caught on the rank that received it.
import { describe, expect, it } from 'vitest';
import { extractNixlEpMetrics } from '../../../framework/metrics/extractors/nixl-ep.ts';
import { runBench } from './bench-cli.ts';

const small = ['--tokens', '32', '--hidden', '512', '--warmup', '1', '--iters', '3'];

describe('disagg-bench ep', { concurrent: true }, () => {
  it('3 ranks: dispatch, combine and e2e verified on every rank, then the control plane for 2 expert counts', async () => {
    const r = await runBench(['ep', '--ranks', '3', '--mode', 'dispatch,combine,e2e', '--control-plane', '--experts-per-rank', '2,4', '--layout', 'per-message', ...small]);
    expect(r.exitCode, r.out).toBe(0);
    const { metrics, problems } = extractNixlEpMetrics(r.out);
    expect(problems).toEqual([]);
    expect(metrics.filter((m) => m.name === 'RANKS_PASSED').map((m) => `${m.labels.mode}@${m.labels.experts_per_rank}=${m.value}`)).toEqual([
      'dispatch@2=3',
      'combine@2=3',
      'e2e@2=3',
      'dispatch@4=3',
      'combine@4=3',
      'e2e@4=3',
    ]);
    expect(r.out).toContain('Experts: 4/rank (12 total), TopK: 2');
    expect(r.out).toContain('Control Plane: 4 experts/rank x 3 ranks = 12 total');
  });

  it('a corrupted dispatch byte on rank 1 fails that rank, with the slot, token and expert named', async () => {
    const r = await runBench(['ep', '--ranks', '2', '--mode', 'combine', '--test-corrupt-rank', '1', ...small]);
    expect(r.exitCode).toBe(1);
    expect(r.out).toContain('Data Plane (combine): 1/2 ranks passed');
    expect(r.out).toMatch(/Rank 1 failed verification: dispatch: slot 0 \(token \d+ of rank \d for expert \d+\), byte 0: expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2}/);
  });

  it('a rank that never sends its flags makes the others fail naming it, not hang', async () => {
    // XFER_TIMEOUT_S also bounds the collectives before the flag wait: 15 s leaves a loaded
    // machine room to start both ranks (this file runs its cases at once).
    const r = await runBench(['ep', '--ranks', '2', '--mode', 'dispatch', '--test-silent-rank', '1', ...small], { XFER_TIMEOUT_S: '15' });
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/rank 0: ep dispatch iteration 1: no completion flag from rank\(s\) 1 within 15 s/);
  });

  it("--test=connect: the test's one line, each rank's mean across the ranks, for its default 8 and 32 experts per rank", async () => {
    const r = await runBench(['ep', '--ranks', '2', '--test=connect', '--tokens', '16', '--hidden', '256']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toMatch(/^CONNECT: \d+\.\d{2}ms avg across 2 ranks \(min=\d+\.\d{2}, max=\d+\.\d{2}\) \[8 experts\/rank\]$/m);
    expect(r.out).toMatch(/^CONNECT: .* \[32 experts\/rank\]$/m);
    expect(r.out).not.toContain('Control Plane:'); // no table for one operation, as the test prints none
    const { metrics, problems } = extractNixlEpMetrics(r.out);
    expect(problems).toEqual([]);
    const rows = metrics.filter((m) => m.name === 'CP_AVG_MS');
    expect(rows.map((m) => [m.labels.operation, m.labels.experts_per_rank, m.labels.across])).toEqual([['connect', 8, 'ranks'], ['connect', 32, 'ranks']]);
    for (const experts of [8, 32]) {
      const [avg, min, max] = ['CP_AVG_MS', 'CP_MIN_MS', 'CP_MAX_MS'].map((n) => metrics.find((m) => m.name === n && m.labels.experts_per_rank === experts)!.value);
      expect(min).toBeLessThanOrEqual(avg);
      expect(avg).toBeLessThanOrEqual(max);
    }
  });

  it("the control-plane test's command line as its argparse takes it: abbreviated options (--te, --rou, --war, --num-t, --hid, --exp)", async () => {
    const r = await runBench(['ep', '--ranks', '2', '--backend', 'shm', '--te', 'connect', '--rou', '2', '--war', '0', '--num-t', '16', '--hid', '256', '--exp', '8']);
    expect(r.exitCode, r.out).toBe(0);
    const { metrics, problems } = extractNixlEpMetrics(r.out);
    expect(problems).toEqual([]);
    expect(metrics.filter((m) => m.name === 'CP_AVG_MS').map((m) => [m.labels.operation, m.labels.experts_per_rank])).toEqual([['connect', 8]]);
    const refused = await runBench(['ep', '--ranks', '2', '--backend', 'shm', '--test', 'reconnect']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.out).toContain("argument --test: invalid choice: 'reconnect' (choose from 'init', 'connect', 'disconnect', 'destroy', 'cycle')");
    expect(refused.out).not.toContain('[rank');
  });

  it('the control-plane cycle without --experts-per-rank runs the test\'s 8 and 32; the data plane its 8', async () => {
    const r = await runBench(['ep', '--ranks', '2', '--mode', 'e2e', '--control-plane', ...small]);
    expect(r.exitCode, r.out).toBe(0);
    const { metrics } = extractNixlEpMetrics(r.out);
    expect(metrics.filter((m) => m.name === 'RANKS_PASSED').map((m) => m.labels.experts_per_rank)).toEqual([8]);
    expect(metrics.filter((m) => m.name === 'CP_TOTAL_MS').map((m) => m.labels.experts_per_rank)).toEqual([8, 32]);
  });

  it("the EP tests' single-node form WORLD_SIZE=1 RANK=0 --num-processes=3 runs 3 ranks, not 1", async () => {
    const r = await runBench(['ep', '--num-processes=3', '--mode', 'e2e', ...small], { WORLD_SIZE: '1', RANK: '0', MASTER_ADDR: '127.0.0.1' });
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toContain('Single-node setup: 3 processes');
    expect(r.out).toContain('Data Plane (e2e): 3/3 ranks passed');
  });

  it('two nodes of 2 processes each (--world-size/--rank/--master-addr): 4 ranks; a missing node fails the run', async () => {
    const node = (rank: number) => ['ep', '--num-processes', '2', '--world-size', '2', '--rank', String(rank), '--master-addr', 'localhost', '--mode', 'e2e', ...small];
    const [n0, n1] = await Promise.all([runBench(node(0)), runBench(node(1))]);
    expect([n0.exitCode, n1.exitCode], n0.out + n1.out).toEqual([0, 0]);
    expect(n0.out).toContain('Total ranks: 4');
    expect(n0.out).toContain('Data Plane (e2e): 4/4 ranks passed');
    const alone = await runBench(node(0), { XFER_TIMEOUT_S: '15', XFER_CONNECT_TIMEOUT_S: '15' });
    expect(alone.exitCode).not.toBe(0);
    expect(alone.out).toMatch(/ranks? 2, 3|rank 2|ranks 2-3/);
    expect(alone.out).not.toMatch(/ranks passed/);
  });

  it('control plane: 1 warm-up and 3 measured rounds, avg/min/max over the rounds', async () => {
    const r = await runBench(['ep', '--ranks', '2', '--control-plane', '--warmup', '1', '--rounds', '3', '--experts-per-rank', '2', '--tokens', '16', '--hidden', '256']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toContain('Warmup: 1, Measure: 3 rounds (avg/min/max over the rounds, rank 0)');
    const rows = extractNixlEpMetrics(r.out).metrics.filter((m) => m.name.startsWith('CP_') && m.labels.operation === 'connect');
    const [avg, min, max] = ['CP_AVG_MS', 'CP_MIN_MS', 'CP_MAX_MS'].map((n) => rows.find((m) => m.name === n)!.value);
    expect(min).toBeLessThanOrEqual(avg);
    expect(avg).toBeLessThanOrEqual(max);
    expect(r.out).toMatch(/Across ranks \(each rank's mean over the rounds, ms\): init avg=/);
  });
});


describe('disagg-bench ep: flags refused once, ucx flags reach the ranks', () => {
  it('a bad --nvlink-backend fails before any rank starts; --ucx-error-handling goes to the ranks', async () => {
    const bad = await runBench(['ep', '--ranks', '2', '--backend', 'shm', '--nvlink-backend', 'bogus']);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.out).toContain("argument --nvlink-backend: invalid choice: 'bogus' (choose from 'nixl', 'ipc', 'none')");
    expect(bad.out).not.toContain('[rank');
    const ucx = await runBench(['ep', '--ranks', '2', '--backend', 'ucx', '--ucx-error-handling', 'peer', '--mode', 'e2e', ...small], { UCX_NET_DEVICES: 'lo' });
    expect(ucx.exitCode, ucx.out).toBe(0);
    // the ranks got it (it applies to ucx only, so with shm they refuse it: they saw it)
    const shm = await runBench(['ep', '--ranks', '2', '--backend', 'shm', '--ucx-error-handling', 'peer', '--mode', 'e2e', ...small]);
    expect(shm.out).toContain('--ucx-error-handling peer: applies to the ucx backend only, and this run uses shm');
  });
});
