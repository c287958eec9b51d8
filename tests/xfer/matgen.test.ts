// The KV matrix generator against kvbench's own figures: tests/fixtures/kvbench/matgen-golden.json
// holds what kvbench's inference_workload_matgen.py (NIXL, commit in the file) produced for fixed
// input lengths, every preset, batch sizes 1 to 4, prefill cp, a max_batch_mem cut and the
// rail-optimised order. The same input lengths must give the same batches, bytes and compute times.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  batchIsls, generatePatterns, kvBytesPerToken, MATGEN_DEFAULTS, MODEL_PRESETS, prefillSeconds, sampleIsls, writePatterns, type MatgenOptions,
} from '../../runners/xfer/matgen.ts';
import { parseMatgenArgs } from '../../runners/xfer/benches/matgen-cli.ts';
import { readMatrix } from '../../runners/xfer/matrix.ts';

interface GoldenCase {
  model: string;
  batch_size: number;
  prefill_tp: number;
  prefill_cp: number;
  decode_tp: number;
  num_prefill_nodes: number;
  num_decode_nodes: number;
  ppn: number;
  max_batch_mem: number;
  rail_optimized: boolean;
  isls: number[];
  patterns: { batch: number[]; isl: number; sleep_before_launch_sec: number; cell_bytes: number; cells: [number, number][] }[];
}
const golden = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../fixtures/kvbench/matgen-golden.json'), 'utf8')) as {
  bytes_per_token: Record<string, number>;
  kv_bytes_isl_10000: Record<string, number>;
  cases: GoldenCase[];
};

const optionsOf = (c: GoldenCase): MatgenOptions => ({
  ...MATGEN_DEFAULTS,
  numUserRequests: c.isls.length,
  batchSize: c.batch_size,
  prefillNodes: c.num_prefill_nodes,
  decodeNodes: c.num_decode_nodes,
  prefill: { tp: c.prefill_tp, pp: 1, cp: c.prefill_cp },
  decode: { tp: c.decode_tp, pp: 1, cp: 1 },
  model: MODEL_PRESETS[c.model],
  maxBatchMemBytes: c.max_batch_mem,
  ranksPerNode: c.ppn,
  railOptimized: c.rail_optimized,
});

const llama: MatgenOptions = optionsOf(golden.cases[0]);

describe("KV matrix generator: kvbench's numbers under kvbench's names", () => {
  it('KV bytes per token of every kvbench preset (ISL 10,000 included)', () => {
    for (const [model, bytes] of Object.entries(golden.bytes_per_token)) {
      expect(kvBytesPerToken(MODEL_PRESETS[model]), model).toBe(bytes);
      expect(10_000 * kvBytesPerToken(MODEL_PRESETS[model]), model).toBe(golden.kv_bytes_isl_10000[model]);
    }
  });

  for (const c of golden.cases) {
    const name = `${c.model}, batch ${c.batch_size}, prefill tp ${c.prefill_tp} cp ${c.prefill_cp}, decode tp ${c.decode_tp}, max_batch_mem ${c.max_batch_mem}${c.rail_optimized ? ', rail-optimised' : ''}`;
    it(name, () => {
      const patterns = generatePatterns(optionsOf(c), c.isls);
      expect(patterns.map((p) => p.requests)).toEqual(c.patterns.map((p) => p.batch));
      patterns.forEach((p, i) => {
        const want = c.patterns[i];
        expect(p.isl).toBe(want.isl);
        // Exact bytes: kvbench's value floored (these are whole already).
        const cells = p.matrix.flatMap((row, r) => row.flatMap((bytes, col) => (bytes > 0 ? [[r, col, bytes]] : [])));
        expect(cells).toEqual(want.cells.map(([r, col]) => [r, col, Math.floor(want.cell_bytes)]));
        // Python sums the FLOPs in exact integers, JavaScript in doubles: equal to 12 digits.
        expect(Math.abs(p.computeSec / want.sleep_before_launch_sec - 1)).toBeLessThan(1e-12);
      });
    });
  }
});

describe('KV matrix generator: where it deliberately differs', () => {
  it('--compute-model per-sequence: each request prefilled on its own (kvbench: B * (sum of S)^2)', () => {
    const m = MODEL_PRESETS['llama-405b'];
    const one = (s: number) => (4 * s ** 2 * m.hidden * m.layers + 16 * s * m.hidden ** 2 * m.layers) / (36e12 * 4);
    expect(prefillSeconds([1000, 3000], m, 4, 36e12, 'per-sequence')).toBeCloseTo(one(1000) + one(3000), 9);
    const kvbench = (4 * 2 * 4000 ** 2 * m.hidden * m.layers + 16 * 2 * 4000 * m.hidden ** 2 * m.layers) / (36e12 * 4);
    expect(prefillSeconds([1000, 3000], m, 4, 36e12)).toBeCloseTo(kvbench, 9);
    expect(prefillSeconds([5000], m, 4, 36e12, 'per-sequence')).toBe(prefillSeconds([5000], m, 4, 36e12)); // the same for one request
    const batched = generatePatterns({ ...llama, batchSize: 2, computeModel: 'per-sequence' }, [1000, 3000]);
    expect(batched[0].computeSec).toBeCloseTo(one(1000) + one(3000), 9);
  });

  it('the real models have their own presets: Qwen3-30B-A3B (head_dim 128), DeepSeek-R1 with its MLA latent', () => {
    expect(kvBytesPerToken(MODEL_PRESETS['qwen3-30B-A3B'])).toBe(2 * 128 * 4 * 48 * 2);
    expect(kvBytesPerToken(MODEL_PRESETS['deepseek-r1-mla'])).toBe((512 + 64) * 61 * 2);
  });

  it('unequal numbers of prefill and decode workers (kvbench refuses them) are paired round-robin each', () => {
    const patterns = generatePatterns({ ...llama, decodeNodes: 1 }, [2000, 2000, 2000]);
    const senders = patterns.map((p) => p.matrix.findIndex((row) => row.some((c) => c > 0)));
    expect(senders).toEqual([0, 4, 0]);
    for (const p of patterns) expect(p.matrix.every((row) => row.slice(0, 8).every((c) => c === 0))).toBe(true);
  });

  it('draws input lengths as int(normal) clipped, reproducibly from --seed; batches as kvbench (close after the request that crosses the limits)', () => {
    const isls = sampleIsls({ ...llama, numUserRequests: 50, seed: 42 });
    expect(sampleIsls({ ...llama, numUserRequests: 50, seed: 42 })).toEqual(isls);
    expect(isls.every((s) => Number.isInteger(s) && s >= 1000 && s <= 128000)).toBe(true);
    expect(batchIsls([10, 20, 30, 40, 50], 2, 1e9, 1)).toEqual([[10, 20], [30, 40], [50]]);
    expect(batchIsls([10, 20, 30, 40, 50], 10, 45, 1)).toEqual([[10, 20, 30], [40, 50]]);
  });

  it('refuses what kvbench refuses, with the reason', () => {
    expect(() => generatePatterns({ ...llama, prefill: { tp: 8, pp: 1, cp: 1 }, decode: { tp: 4, pp: 1, cp: 1 } })).toThrow(/prefill tp \(8\) must be <= decode tp \(4\)/);
    expect(() => generatePatterns({ ...llama, decode: { tp: 8, pp: 2, cp: 1 } })).toThrow(/pp = 1/);
    expect(() => generatePatterns({ ...llama, decode: { tp: 8, pp: 1, cp: 2 } })).toThrow(/decode cp must be 1/);
    expect(() => generatePatterns({ ...llama, railOptimized: true, prefill: { tp: 2, pp: 1, cp: 1 } })).toThrow(/--rail-optimized needs decode tp 8 \(a full node\) and prefill tp 4/);
  });
});

describe("matgen's output and options", () => {
  it("writes exact bytes and a metadata.yaml kvbench reads: absolute matrix paths (its working directory does not matter), whole-byte cells", () => {
    const patterns = generatePatterns(llama, [10000, 1000, 23456]);
    const dir = mkdtempSync(path.join(tmpdir(), 'matgen-'));
    const meta = writePatterns(path.relative(process.cwd(), dir), patterns, { mem_type: 'cpu' });
    const doc = parse(readFileSync(meta, 'utf8')) as { traffic_patterns: { matrix_file: string; mem_type: string; sleep_before_launch_sec: number; metadata: { isl: number } }[] };
    expect(doc.traffic_patterns).toHaveLength(3);
    doc.traffic_patterns.forEach((p, i) => {
      expect(p).toMatchObject({ matrix_file: path.join(dir, `matrix_${i}.txt`), mem_type: 'cpu', metadata: { isl: patterns[i].isl } });
      expect(path.isAbsolute(p.matrix_file)).toBe(true);
      expect(p.sleep_before_launch_sec).toBe(patterns[i].computeSec);
      // kvbench's parse_size takes every cell: plain integers (float() then int() is exact below 2^53).
      expect(readFileSync(p.matrix_file, 'utf8').split(/\s+/).filter(Boolean).every((t) => /^\d+$/.test(t))).toBe(true);
      expect(readMatrix(p.matrix_file, 24)).toEqual(patterns[i].matrix);
    });
  });

  it("takes kvbench's command line: the `generate` word, --no-rail-optimized, results in matrices_<ranks>ranks by default", () => {
    const base = ['--model', 'llama-405b', '--num-prefill-nodes', '1', '--num-decode-nodes', '1', '--prefill-tp', '4', '--decode-tp', '8'];
    const parsed = parseMatgenArgs(['generate', ...base]);
    expect(parsed.resultsDir).toBe('matrices_16ranks');
    expect(parsed.options.railOptimized).toBe(false);
    expect(parseMatgenArgs([...base, '--rail-optimized']).options.railOptimized).toBe(true);
    expect(parseMatgenArgs([...base, '--rail-optimized', '--no-rail-optimized']).options.railOptimized).toBe(false);
    expect(parseMatgenArgs([...base, '--compute-model', 'per-sequence']).options.computeModel).toBe('per-sequence');
    expect(() => parseMatgenArgs([...base, '--compute-model', 'exact'])).toThrow(/--compute-model must be one of kvbench, per-sequence, got 'exact'/);
  });
});
