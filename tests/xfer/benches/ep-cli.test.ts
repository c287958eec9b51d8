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
    const r = await runBench(['ep', '--ranks', '2', '--mode', 'dispatch', '--test-silent-rank', '1', ...small], { XFER_TIMEOUT_S: '3' });
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/rank 0: ep dispatch iteration 1: no completion flag from rank\(s\) 1 within 3 s/);
  });

  it('--test=connect prints that row only', async () => {
    const r = await runBench(['ep', '--ranks', '2', '--test=connect', '--tokens', '16', '--hidden', '256']);
    expect(r.exitCode, r.out).toBe(0);
    const rows = extractNixlEpMetrics(r.out).metrics.filter((m) => m.name === 'CP_AVG_MS');
    expect(rows.map((m) => m.labels.operation)).toEqual(['connect']);
  });
});
