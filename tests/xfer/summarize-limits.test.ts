// bench/gpu/summarize-limits.ts over logs the GPU machine wrote (committed under bench/results/gpu/):
// the gated all-to-all judged against the gated limit of the same run, and a run whose ranks share
// GPUs read for its rank count and marked as no figures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { maxOf } from '../../runners/common/stats.ts';

const root = path.resolve(import.meta.dirname, '../..');
const results = path.join(root, 'bench/results/gpu/2026-11-27-h200x2-limits');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'summarize-limits-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function summarize(folder: string): Promise<{ text: string; record: { goals: { what: string; median: number; values: number[]; metOnMedian: boolean }[] } }> {
  const out = path.join(tmp, `${path.basename(folder)}.jsonl`);
  const r = await execa(process.execPath, ['--import', 'tsx', path.join(root, 'bench/gpu/summarize-limits.ts'), folder, '--out', out], { cwd: root });
  return { text: r.stdout, record: JSON.parse(fs.readFileSync(out, 'utf8').trim().split('\n').pop()!) };
}

describe('summarize-limits', () => {
  it('judges the 2-GPU all-to-all on the gated pair, and keeps the host-timed and ungated forms beside it', async () => {
    const { record } = await summarize(path.join(results, 'run-b-final'));
    const goal = (start: string) => record.goals.find((g) => g.what.startsWith(start));
    const gated = goal('all-to-all 64M/peer auto, gated: both ways at once limit / engine');
    expect(gated?.values).toHaveLength(3);
    // each run's value is the gated limit over the gated engine, read from that run's limits.jsonl
    const lines = fs.readFileSync(path.join(results, 'run-b-final/run1/limits.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const limit = lines.find((l) => l.kind === 'limit' && l.mode === 'both ways at once, gated' && l.label === '64M');
    const engine = lines.find((l) => l.kind === 'a2a' && l.variant === 'auto' && !l.withSelf && l.bytesPerPeer === 64 << 20);
    expect(gated?.values[0]).toBeCloseTo(limit.medianMs / engine.gated.medianMs, 3);
    expect(goal('all-to-all 64M/peer auto, gated engine vs the both ways at once limit timed per GPU without gates')).toBeDefined();
    expect(goal('all-to-all 64M/peer auto, host-timed')).toBeDefined();
    expect(goal('all-to-all 16M/peer auto (+self, NCCL\'s bytes), gated: NCCL / engine')).toBeDefined();
  });

  it('reads a 4-rank run (ranks sharing 2 GPUs): all pairs at once as the limit, no NCCL, and says the figures are no limits', async () => {
    const { text, record } = await summarize(path.join(results, 'run-b-4ranks-on-2gpus'));
    expect(text).toContain('NOTE: ranks share GPUs');
    expect(text).toMatch(/all-to-all 16M\/peer auto .*gatedLimitMs=\d/);
    // EP's cross-GPU bytes are set against every GPU receiving them from all the others at once
    const lines = fs.readFileSync(path.join(results, 'run-b-4ranks-on-2gpus/run1/limits.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const exchange = lines.find((l) => l.kind === 'limit' && l.mode === 'all pairs at once' && l.label === 'EP 4096x7168x8 dispatch cross-GPU bytes');
    expect(exchange.receivedBytes).toBe(3 * exchange.bytes);
    const shown = Number(/EP 4096x7168x8 dispatch .*peerGbpsSameBytes=([\d.]+)/.exec(text)?.[1]);
    expect(shown).toBeCloseTo(exchange.gbps, 2);
    expect(record.goals.some((g) => g.what.includes('NCCL'))).toBe(false);
  });

  it('judges the KV pipe on 4 GPUs against one GPU copying to one other, not every GPU to all others at once', async () => {
    // 4 H200s, 2026-11-27: the 4G exchange limit (~197 GB/s per GPU) made the pair's 391 GB/s read as 1.98x its limit.
    const folder = path.resolve(results, '../2026-11-27-h200x4-limits');
    const { text } = await summarize(folder);
    const lines = fs.readFileSync(path.join(folder, 'run1/limits.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const best = maxOf(lines.filter((l) => l.kind === 'limit' && l.label === '4G' && l.mode.startsWith('one way')).map((l) => l.gbps));
    const exchange = lines.find((l) => l.kind === 'limit' && l.label === '4G' && l.mode === 'all pairs at once');
    expect(exchange.gbps).toBeLessThan(best * 0.6);
    const peer = Number(/KV pipe pure transfer .*peerGbps=([\d.]+)/.exec(text)?.[1]);
    expect(peer).toBeCloseTo(best, 2);
    expect(Number(/KV pipe pure transfer .*ratio=([\d.]+)/.exec(text)?.[1])).toBeLessThan(1.05);
  });
});
