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
  batchIsls, checkMatgenOptions, generatePatterns, kvBytesPerToken, MATGEN_DEFAULTS, MODEL_PRESETS, prefillSeconds, sampleIsls, shortWorkerNotes, workersOf, writePatterns,
  type MatgenOptions,
} from '../../runners/xfer/matgen.ts';
import { parseMatgenArgs } from '../../runners/xfer/benches/matgen-cli.ts';
import { readMatrix } from '../../runners/xfer/matrix.ts';
import { formatSizeCell, pythonG, pythonRound, pyyamlFloat } from '../../runners/xfer/matgen-upstream-format.ts';

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

  it('unequal numbers of prefill and decode workers: refused as kvbench refuses them; --pair-workers round-robin pairs them round-robin each', () => {
    // prefill tp 8 / decode tp 8 on 1 and 2 nodes = 1 and 2 workers
    expect(() => generatePatterns({ ...llama, prefill: { tp: 8, pp: 1, cp: 1 }, decode: { tp: 8, pp: 1, cp: 1 }, prefillNodes: 1, decodeNodes: 2 }, [2000])).toThrow(
      'matgen: Prefill and decode workers must have the same number of workers, got 1 and 2 (kvbench pairs prefill worker k with decode worker k; --pair-workers round-robin pairs any numbers)',
    );
    const patterns = generatePatterns({ ...llama, decodeNodes: 1, pairWorkers: 'round-robin' }, [2000, 2000, 2000]);
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

describe("kvbench's refusals and its file format", () => {
  const base = ['--model', 'llama-405b', '--num-prefill-nodes', '1', '--num-decode-nodes', '2', '--prefill-tp', '4', '--decode-tp', '8'];

  it('--isl-scale -5 is taken as click takes it (the value -5) and refused for what it is', () => {
    for (const argv of [[...base, '--isl-scale', '-5'], [...base, '--isl-scale=-5']]) {
      expect(() => parseMatgenArgs(argv)).toThrow("--isl-scale -5: the ISLs' normal distribution needs a scale >= 0 (kvbench's numpy.random.normal refuses it: scale < 0)");
    }
    expect(parseMatgenArgs([...base, '--isl-scale', '0']).options.islScale).toBe(0);
  });

  it("python's round(x, 2), {:g} and repr(float) as kvbench's format_size and PyYAML use them", () => {
    expect(pythonRound(0.125, 2)).toBe(0.12); // half to even on the exact value (JS toFixed gives 0.13)
    expect(pythonRound(0.375, 2)).toBe(0.38);
    expect(pythonRound(759.5068359375, 2)).toBe(759.51);
    expect(pythonRound(2.675, 2)).toBe(2.67); // 2.675 is 2.67499999... in binary
    expect(['1', '1023.99', '759.51', '1.5', '123457', '1.23457e+06', '0.0001', '1e-05', '100000'].map((s, i) => [s, i])).toEqual(
      [1, 1023.99, 759.51, 1.5, 123456.7, 1234567, 0.0001, 0.00001, 100000].map((x, i) => [pythonG(x), i]),
    );
    expect(pythonG(123456.5)).toBe('123456'); // a tie at 6 digits: to even, as Python
    expect(['0', '100B', '1K', '63K', '759.51M', '1.5G', '2048G'].map((s) => s)).toEqual([0, 100, 1024, 64512, 796400640, 1.5 * 2 ** 30, 2 ** 41].map(formatSizeCell));
    expect([55.13286955008, 3, 1e-5, 0.0001, 1e16, 1.5e16, 123.456, 1e15].map(pyyamlFloat)).toEqual([
      '55.13286955008', '3.0', '1.0e-05', '0.0001', '1.0e+16', '1.5e+16', '123.456', '1000000000000000.0',
    ]);
  });

  it('--cell-format upstream writes kvbench\'s files byte for byte: format_size cells, metadata.yaml as PyYAML dumps it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'matgen-upstream-'));
    const { options } = parseMatgenArgs([...base, '--num-user-requests', '2', '--isl-scale', '0', '--isl-mean', '12345']);
    const patterns = generatePatterns(options);
    writePatterns(dir, patterns, {}, 'upstream');
    // llama-405b: 516096 bytes per token x 12345 = 6371205120 bytes; / tp 4 / 2 peers = 796400640 = 759.51M
    const row = (cells: Record<number, string>) => `${Array.from({ length: 24 }, (_, j) => cells[j] ?? '0').join(' ')}\n`;
    const m = '759.51M';
    const expected0 = [0, 1, 2, 3].map((i) => row({ [8 + 2 * i]: m, [9 + 2 * i]: m })).join('') + Array.from({ length: 20 }, () => row({})).join('');
    expect(readFileSync(path.join(dir, 'matrix_0.txt'), 'utf8')).toBe(expected0);
    // batch 1: prefill worker 1 (ranks 4-7) to decode worker 1 (ranks 16-23)
    const expected1 = Array.from({ length: 4 }, () => row({})).join('') + [0, 1, 2, 3].map((i) => row({ [16 + 2 * i]: m, [17 + 2 * i]: m })).join('') + Array.from({ length: 16 }, () => row({})).join('');
    expect(readFileSync(path.join(dir, 'matrix_1.txt'), 'utf8')).toBe(expected1);
    expect(readFileSync(path.join(dir, 'metadata.yaml'), 'utf8')).toBe(
      [0, 1].map((i) => `- matrix_file: ${path.join(dir, `matrix_${i}.txt`)}\n  metadata:\n    isl: 12345\n  sleep_before_launch_sec: 55.13286955008\n`).reduce((a, b) => a + b, 'traffic_patterns:\n'),
    );
    // exact bytes stay the default
    expect(parseMatgenArgs(base).cellFormat).toBe('exact');
    expect(parseMatgenArgs([...base, '--cell-format', 'upstream']).cellFormat).toBe('upstream');
  });
});

describe("matgen takes what kvbench's matgen takes (inference_workload_matgen.py generate)", () => {
  const base = ['--model', 'llama-405b', '--num-prefill-nodes', '1', '--num-decode-nodes', '1'];

  it('ranks that are not a whole number of workers: a short last worker, each of its ranks sending a full worker\'s share', () => {
    // ppn 6, tp 4 on both sides: prefill workers [0-3], [4, 5]; decode workers [6-9], [10, 11] (kvbench's ranks[i : i + 4])
    const { options } = parseMatgenArgs([...base, '--ppn', '6', '--prefill-tp', '4', '--decode-tp', '4', '--num-user-requests', '2']);
    expect(workersOf(options)).toEqual({ prefill: [[0, 1, 2, 3], [4, 5]], decode: [[6, 7, 8, 9], [10, 11]] });
    const [full, short] = generatePatterns(options, [2000, 2000]);
    const share = (2000 * kvBytesPerToken(MODEL_PRESETS['llama-405b'])) / 4; // kvbench's kv / tp / pp / cp / peers, peers = 4 / 4 = 1
    expect(full.transfers).toEqual([[0, 6], [1, 7], [2, 8], [3, 9]]);
    expect(short.transfers).toEqual([[4, 10], [5, 11]]);
    for (const [from, to] of short.transfers) expect(short.matrix[from][to]).toBe(share);
    expect(shortWorkerNotes(options)).toEqual([
      'the last prefill worker has 2 of 4 ranks: as kvbench, each of its ranks sends kv / 4, so its batches move 2/4 of their KV cache',
      "the last decode worker has 2 of 4 ranks (kvbench's chunking)",
    ]);
  });

  it('refuses, saying why, the short workers kvbench fails on with a Python error', () => {
    // prefill [0], [1], [2] (tp 1) each send to 2 decode ranks; decode [3, 4], [5]: the short one cannot take them
    const { options } = parseMatgenArgs([...base, '--ppn', '3', '--prefill-tp', '1', '--decode-tp', '2', '--pair-workers', 'round-robin']);
    expect(() => checkMatgenOptions(options)).toThrow(/decode worker 1 has 1 rank\(s\), fewer than the 2 that prefill worker 0's 1 rank\(s\) send to \(2 each; kvbench fails there with a StopIteration\)/);
    const rails = parseMatgenArgs([...base, '--ppn', '10', '--prefill-tp', '4', '--decode-tp', '8', '--rail-optimized', '--pair-workers', 'round-robin']).options;
    expect(() => checkMatgenOptions(rails)).toThrow(/--rail-optimized reorders each decode worker's 8 ranks, and the last decode worker has 2 \(kvbench fails there with an IndexError\)/);
  });

  it('--num-user-requests 0: no patterns, and metadata.yaml with an empty list, as PyYAML writes it', () => {
    const { options } = parseMatgenArgs([...base, '--num-user-requests', '0']);
    expect(options.numUserRequests).toBe(0);
    const patterns = generatePatterns(options);
    expect(patterns).toEqual([]);
    for (const format of ['exact', 'upstream'] as const) {
      const dir = mkdtempSync(path.join(tmpdir(), 'matgen-empty-'));
      expect(readFileSync(writePatterns(dir, patterns, {}, format), 'utf8'), format).toBe('traffic_patterns: []\n');
    }
    // below 0 as kvbench takes it: range(-1) is empty too
    expect(parseMatgenArgs([...base, '--num-user-requests', '-3']).options.numUserRequests).toBe(0);
  });

  it("takes the ints kvbench's click takes (int(): 1_500, 0, -3) and refuses what click refuses in click's words", () => {
    expect(parseMatgenArgs([...base, '--num-user-requests', '1_500']).options.numUserRequests).toBe(1500);
    const zero = parseMatgenArgs([...base, '--batch-size', '0', '--num-user-requests', '3']).options;
    expect(zero.batchSize).toBe(0);
    // every request closes its batch, as with 1 (kvbench: len(batch) >= batch_size)
    expect(generatePatterns(zero)).toHaveLength(generatePatterns({ ...zero, batchSize: 1 }).length);
    expect(parseMatgenArgs([...base, '--isl-mean', '0']).options.islMean).toBe(0);
    for (const raw of ['nan', 'inf', '1.5', '1__0']) {
      expect(() => parseMatgenArgs([...base, '--isl-mean', raw])).toThrow(`Invalid value for '--isl-mean': '${raw}' is not a valid integer.`);
    }
  });

  it('--min-isl above --max-isl: every ISL is --max-isl, as kvbench clips; --max-batch-mem 0: one request per batch', () => {
    const clipped = parseMatgenArgs([...base, '--min-isl', '500', '--max-isl', '100', '--num-user-requests', '20']).options;
    expect(sampleIsls(clipped)).toEqual(new Array(20).fill(100));
    const zero = parseMatgenArgs([...base, '--max-batch-mem', '0', '--batch-size', '4', '--num-user-requests', '6']).options;
    expect(zero.maxBatchMemBytes).toBe(0);
    expect(batchIsls([10, 20, 30], zero.batchSize, zero.maxBatchMemBytes, 1)).toEqual([[10], [20], [30]]);
    expect(generatePatterns(zero)).toHaveLength(6);
  });
});
