// KV-cache transfer matrices for disaggregated inference: kvbench's inference_workload_matgen
// (NIXL benchmark/kvbench/test/), its numbers under its names. User requests with random input
// lengths (ISL) are batched, each batch is prefilled by one prefill worker and its KV cache sent
// to one decode worker; one matrix per batch, plus a metadata.yaml that `sequential-ct-perftest`
// (this project's or kvbench's) runs as is. As kvbench:
// - ISL = int(normal(mean, scale)) clipped to [min, max]; a batch takes requests until it holds
//   batch_size of them or its KV bytes exceed max_batch_mem (the request that crossed it included);
// - KV bytes per token = 2 * head_dim * kv_heads * layers * dtype_size, head_dim = hidden // heads;
// - each prefill rank holds kv / (tp * pp * cp) bytes and sends an equal share to each of its
//   peers = decode tp / (prefill tp * prefill cp) consecutive decode ranks (rail-optimised: the
//   decode worker's ranks in the order 0,4,1,5,2,6,3,7);
// - prefill compute = (4*B*S^2*H*L + 16*B*S*H^2*L) / (36e12 * TP) s, B the batch's requests and S
//   its TOTAL input length (--compute-model per-sequence sums each request's own instead).
// Where this differs, on purpose: cells are exact bytes (floor of kvbench's value; kvbench writes
// 2 decimals of a binary unit), matrix paths in metadata.yaml are absolute as kvbench writes them,
// ISLs come from a seeded generator (kvbench's are unseeded), unequal numbers of prefill and
// decode workers are refused as kvbench refuses them unless pairWorkers is round-robin (each
// cycled), a short last worker is taken as kvbench takes it (refused, saying why, only where
// kvbench fails with a Python error), and the presets
// qwen3-30B-A3B and deepseek-r1-mla have the real models' KV shapes (kvbench's qwen3-30B and
// deepseek-r1 do not).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { formatMatrix, type TransferMatrix } from './matrix.ts';
import { seededRandom, normalSample } from '../common/random.ts';
import { upstreamMatrixText, upstreamMetadataYaml } from './matgen-upstream-format.ts';
import { UsageError } from '../common/errors.ts';

export interface ModelShape {
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  /** Bytes per KV element (2 for bf16/fp16, 1 for fp8). */
  dtypeSize: number;
  /** Per-head size where it is not hidden // heads (Qwen3: 128). */
  headDim?: number;
  /** MLA: one latent of this many elements per token and layer instead of K and V per head (DeepSeek: 512 + 64). */
  latentDim?: number;
}

export const MODEL_PRESETS: Record<string, ModelShape> = {
  // kvbench's presets, as it defines them.
  'llama-405b': { hidden: 16384, layers: 126, heads: 128, kvHeads: 8, dtypeSize: 2 },
  'qwen3-30B': { hidden: 32768, layers: 48, heads: 32, kvHeads: 4, dtypeSize: 2 },
  'deepseek-r1-distill-llama-70b': { hidden: 8192, layers: 80, heads: 64, kvHeads: 8, dtypeSize: 2 },
  'deepseek-r1': { hidden: 12288, layers: 100, heads: 96, kvHeads: 12, dtypeSize: 2 },
  // The real models' shapes (their config.json), for KV bytes that match a deployment.
  'qwen3-30B-A3B': { hidden: 2048, layers: 48, heads: 32, kvHeads: 4, headDim: 128, dtypeSize: 2 },
  'deepseek-r1-mla': { hidden: 7168, layers: 61, heads: 128, kvHeads: 1, latentDim: 512 + 64, dtypeSize: 2 },
};

export interface Parallelism {
  tp: number;
  pp: number;
  cp: number;
}

/** kvbench: the batch as B sequences of its total length; per-sequence: each request's own length. */
export const computeModels = ['kvbench', 'per-sequence'] as const;
export type ComputeModel = (typeof computeModels)[number];

export interface MatgenOptions {
  numUserRequests: number;
  batchSize: number;
  prefillNodes: number;
  decodeNodes: number;
  prefill: Parallelism;
  decode: Parallelism;
  model: ModelShape;
  islMean: number;
  islScale: number;
  islMin: number;
  islMax: number;
  /** A batch closes once its KV bytes exceed this (the request that crossed it stays in). */
  maxBatchMemBytes: number;
  ranksPerNode: number;
  /** kvbench's rail-optimised order of the decode ranks (prefill tp 4, decode tp 8 only). */
  railOptimized: boolean;
  /** Effective prefill compute rate (FLOP/s) of the compute-time model. */
  flops: number;
  computeModel: ComputeModel;
  seed: number;
  /** equal (kvbench's, the default): as many prefill as decode workers, required; round-robin: any numbers, each cycled. */
  pairWorkers: WorkerPairing;
}

export const MATGEN_DEFAULTS: Omit<MatgenOptions, 'prefillNodes' | 'decodeNodes' | 'prefill' | 'decode' | 'model'> = {
  numUserRequests: 1000,
  batchSize: 1,
  islMean: 16000,
  islScale: 10000,
  islMin: 1000,
  islMax: 128000,
  maxBatchMemBytes: 100e9,
  ranksPerNode: 8,
  railOptimized: false,
  flops: 36e12,
  computeModel: 'kvbench',
  seed: 0,
  pairWorkers: 'equal',
};

export interface GeneratedPattern {
  matrix: TransferMatrix;
  /** Simulated prefill time of the batch (s): the sleep before its transfer. */
  computeSec: number;
  /** Total input tokens of the batch. */
  isl: number;
  /** The input length of each request of the batch. */
  requests: number[];
  /** kvbench's value of every non-empty cell: kv / tp / pp / cp / peers in float division (its gen_matrix), before format_size. */
  upstreamCell: number;
  /** [sender, receiver] of every non-empty cell. */
  transfers: [number, number][];
}

/** How matrix cells are written: exact bytes (this project's default), or kvbench's format_size (`759.51M`). */
export const cellFormats = ['exact', 'upstream'] as const;
export type CellFormat = (typeof cellFormats)[number];

/** How batches find their workers: kvbench's (as many prefill as decode workers, pair k with k), or round-robin each (this project's). */
export const workerPairings = ['equal', 'round-robin'] as const;
export type WorkerPairing = (typeof workerPairings)[number];

/** KV bytes per token: 2 (K and V) * head_dim * kv_heads * layers * dtype size (MLA: latent * layers * dtype). */
export function kvBytesPerToken(m: ModelShape): number {
  if (m.latentDim !== undefined) return m.latentDim * m.layers * m.dtypeSize;
  return 2 * (m.headDim ?? Math.floor(m.hidden / m.heads)) * m.kvHeads * m.layers * m.dtypeSize;
}

/** Prefill time of a batch (s) whose requests have these input lengths. */
export function prefillSeconds(isls: readonly number[], m: ModelShape, tp: number, flops: number, model: ComputeModel = 'kvbench'): number {
  const { hidden: H, layers: L } = m;
  const flop = (b: number, s: number) => 4 * b * s ** 2 * H * L + 16 * b * s * H ** 2 * L;
  const total = model === 'kvbench' ? flop(isls.length, isls.reduce((a, s) => a + s, 0)) : isls.reduce((a, s) => a + flop(1, s), 0);
  return total / (flops * tp);
}

/** kvbench's rail-optimised order of a decode worker's 8 ranks: NIC i of a prefill node meets NICs i and i+4. */
const RAIL_ORDER = [0, 4, 1, 5, 2, 6, 3, 7];

export function checkMatgenOptions(o: MatgenOptions): void {
  const problems: string[] = [];
  if (o.prefill.pp !== 1 || o.decode.pp !== 1) problems.push('pipeline parallelism must be 1 (pp = 1)');
  if (o.prefill.tp > o.decode.tp) problems.push(`prefill tp (${o.prefill.tp}) must be <= decode tp (${o.decode.tp})`);
  if (o.decode.cp !== 1) problems.push('decode cp must be 1');
  if (o.decode.tp % (o.prefill.tp * o.prefill.cp) !== 0) {
    problems.push(`decode tp (${o.decode.tp}) must be a multiple of prefill tp * cp (${o.prefill.tp * o.prefill.cp})`);
  }
  if (o.railOptimized && (o.decode.tp !== 8 || o.prefill.tp !== 4)) {
    problems.push(`--rail-optimized needs decode tp 8 (a full node) and prefill tp 4 (half a node), as kvbench's, not ${o.decode.tp} and ${o.prefill.tp}`);
  }
  const { prefill, decode } = workersOf(o);
  if (o.pairWorkers === 'equal' && prefill.length !== decode.length) {
    // kvbench's gen_matrices_and_compute_time asserts it, in these words
    problems.push(
      `Prefill and decode workers must have the same number of workers, got ${prefill.length} and ${decode.length} (kvbench pairs prefill worker k with decode worker k; --pair-workers round-robin pairs any numbers)`,
    );
  }
  if (problems.length === 0) problems.push(...shortWorkerProblems(o, prefill, decode));
  if (problems.length) throw new UsageError(`matgen: ${problems.join('; ')}`);
}

/**
 * The workers as kvbench's main() chunks them: prefill ranks 0..P-1 and decode ranks P..P+D-1 in
 * consecutive groups of tp*pp*cp, the last group short when the ranks are not a whole number of
 * workers (kvbench takes that: `ranks[i : i + size]`).
 */
export function workersOf(o: MatgenOptions): { prefill: number[][]; decode: number[][] } {
  const chunk = (first: number, count: number, size: number) =>
    Array.from({ length: Math.ceil(count / size) }, (_, w) => Array.from({ length: Math.min(size, count - w * size) }, (_, i) => first + w * size + i));
  const prefillRanks = o.prefillNodes * o.ranksPerNode;
  return {
    prefill: chunk(0, prefillRanks, o.prefill.tp * o.prefill.pp * o.prefill.cp),
    decode: chunk(prefillRanks, o.decodeNodes * o.ranksPerNode, o.decode.tp * o.decode.pp * o.decode.cp),
  };
}

/** Decode ranks each prefill rank sends to: decode tp / (prefill tp * prefill cp). */
const peersOf = (o: MatgenOptions) => o.decode.tp / (o.prefill.tp * o.prefill.cp);

/**
 * What kvbench cannot do with a short last worker, where it fails with a Python error: reorder a
 * short decode worker for the rails (IndexError), or give a prefill worker fewer decode ranks than
 * its ranks send to (StopIteration in gen_matrix).
 */
function shortWorkerProblems(o: MatgenOptions, prefill: number[][], decode: number[][]): string[] {
  const short = decode.find((w) => w.length < o.decode.tp * o.decode.pp * o.decode.cp);
  if (o.railOptimized && short) {
    return [`--rail-optimized reorders each decode worker's 8 ranks, and the last decode worker has ${short.length} (kvbench fails there with an IndexError)`];
  }
  const pairs = o.pairWorkers === 'equal' ? prefill.map((_, k) => [k, k]) : prefill.flatMap((_, k) => decode.map((_, d) => [k, d]));
  for (const [k, d] of pairs) {
    const needed = prefill[k].length * peersOf(o);
    if (decode[d].length < needed) {
      return [
        `decode worker ${d} has ${decode[d].length} rank(s), fewer than the ${needed} that prefill worker ${k}'s ${prefill[k].length} rank(s) send to ` +
          `(${peersOf(o)} each; kvbench fails there with a StopIteration): give both sides whole workers`,
      ];
    }
  }
  return [];
}

/**
 * What a run with a short last worker does, said once: as in kvbench, each of its ranks sends a full
 * worker's share (kv / (tp * pp * cp)), so its batches move only part of their KV cache.
 */
export function shortWorkerNotes(o: MatgenOptions): string[] {
  const { prefill, decode } = workersOf(o);
  const notes: string[] = [];
  const full = { prefill: o.prefill.tp * o.prefill.pp * o.prefill.cp, decode: o.decode.tp * o.decode.pp * o.decode.cp };
  const lastPrefill = prefill[prefill.length - 1];
  if (lastPrefill.length < full.prefill) {
    notes.push(
      `the last prefill worker has ${lastPrefill.length} of ${full.prefill} ranks: as kvbench, each of its ranks sends kv / ${full.prefill}, so its batches move ${lastPrefill.length}/${full.prefill} of their KV cache`,
    );
  }
  const lastDecode = decode[decode.length - 1];
  if (lastDecode.length < full.decode) notes.push(`the last decode worker has ${lastDecode.length} of ${full.decode} ranks (kvbench's chunking)`);
  return notes;
}

/** The input length of each user request: int(normal(mean, scale)) clipped, as kvbench draws them (seeded here). */
export function sampleIsls(o: Pick<MatgenOptions, 'numUserRequests' | 'islMean' | 'islScale' | 'islMin' | 'islMax' | 'seed'>): number[] {
  const random = seededRandom(o.seed);
  return Array.from({ length: o.numUserRequests }, () => Math.min(o.islMax, Math.max(o.islMin, Math.trunc(normalSample(random, o.islMean, o.islScale)))));
}

/** kvbench's batching: add the request, close the batch at batch_size requests or past max_batch_mem bytes. */
export function batchIsls(isls: readonly number[], batchSize: number, maxBatchMemBytes: number, bytesPerToken: number): number[][] {
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  for (const isl of isls) {
    current.push(isl);
    bytes += isl * bytesPerToken;
    if (bytes > maxBatchMemBytes || current.length >= batchSize) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
  }
  if (current.length) batches.push(current);
  return batches;
}

/** The patterns of a workload; `isls` (default: drawn from the options) are the requests' input lengths in order. */
export function generatePatterns(o: MatgenOptions, isls: readonly number[] = sampleIsls(o)): GeneratedPattern[] {
  checkMatgenOptions(o);
  const pWorld = o.prefill.tp * o.prefill.pp * o.prefill.cp;
  const world = (o.prefillNodes + o.decodeNodes) * o.ranksPerNode;
  const workers = workersOf(o);
  const decodeWorkers = o.railOptimized ? workers.decode.map((w) => RAIL_ORDER.map((i) => w[i])) : workers.decode;
  const perToken = kvBytesPerToken(o.model);
  const peers = peersOf(o);

  return batchIsls(isls, o.batchSize, o.maxBatchMemBytes, perToken).map((batch, b) => {
    const matrix: TransferMatrix = Array.from({ length: world }, () => new Array<number>(world).fill(0));
    // kvbench pairs prefill worker k with decode worker k (it requires as many of each); round-robin each here.
    const prefillWorker = workers.prefill[b % workers.prefill.length];
    const decodeWorker = decodeWorkers[b % decodeWorkers.length];
    const isl = batch.reduce((a, c) => a + c, 0);
    // kv / (tp*pp*cp) / peers, floored to whole bytes exactly (integer division).
    const kv = isl * perToken;
    const divisor = pWorld * peers;
    const share = (kv - (kv % divisor)) / divisor;
    const transfers: [number, number][] = [];
    // kvbench's gen_matrix: each rank of the prefill worker (a short one included) takes the next `peers` decode ranks
    prefillWorker.forEach((from, j) => {
      for (let k = 0; k < peers; k++) {
        const to = decodeWorker[j * peers + k];
        matrix[from][to] = share;
        transfers.push([from, to]);
      }
    });
    const upstreamCell = kv / o.prefill.tp / o.prefill.pp / o.prefill.cp / peers;
    const computeSec = prefillSeconds(batch, o.model, o.prefill.tp, o.flops, o.computeModel);
    return { matrix, computeSec, isl, requests: batch, upstreamCell, transfers };
  });
}

/** kvbench's default results folder: matrices_<ranks>ranks in the working directory. */
export function defaultResultsDir(o: Pick<MatgenOptions, 'prefillNodes' | 'decodeNodes' | 'ranksPerNode'>): string {
  return `matrices_${(o.prefillNodes + o.decodeNodes) * o.ranksPerNode}ranks`;
}

/**
 * Writes matrix_<i>.txt and metadata.yaml into dir, matrix paths absolute (as kvbench writes them,
 * so kvbench's sequential-ct-perftest reads the file from any working directory). `patternFields`
 * (e.g. { mem_type: 'cpu', xfer_op: 'READ' }) go into every pattern of metadata.yaml. `cellFormat`
 * exact (default): cells in whole bytes, metadata with the batch's request count; upstream: kvbench's
 * files byte for byte (matgen-upstream-format.ts).
 */
export function writePatterns(dir: string, patterns: GeneratedPattern[], patternFields: Record<string, string | number> = {}, cellFormat: CellFormat = 'exact'): string {
  mkdirSync(dir, { recursive: true });
  const metadataFile = path.join(dir, 'metadata.yaml');
  const files = patterns.map((_, i) => path.resolve(dir, `matrix_${i}.txt`));
  if (cellFormat === 'upstream') {
    patterns.forEach((p, i) => {
      const cells = p.matrix.map((row) => row.map(() => 0));
      for (const [from, to] of p.transfers) cells[from][to] = p.upstreamCell;
      writeFileSync(files[i], upstreamMatrixText(cells));
    });
    writeFileSync(metadataFile, upstreamMetadataYaml(patterns.map((p, i) => ({ matrixFile: files[i], sleepBeforeLaunchSec: p.computeSec, isl: p.isl, extra: patternFields }))));
    return metadataFile;
  }
  const trafficPatterns = patterns.map((p, i) => {
    writeFileSync(files[i], formatMatrix(p.matrix));
    return { matrix_file: files[i], ...patternFields, sleep_before_launch_sec: p.computeSec, metadata: { isl: p.isl, requests: p.requests.length } };
  });
  writeFileSync(metadataFile, stringify({ traffic_patterns: trafficPatterns }));
  return metadataFile;
}
