// The configs of the CT perftests: one traffic pattern with iterations, or a list of
// patterns. Keys and defaults are the reference's; a relative matrix_file is looked up in the
// config's folder, then in the working directory (kvbench's), see matrix-file.ts.
//   iters: 50                  # CT only (default 1)
//   warmup_iters: 10           # CT only (default 0)
//   traffic_pattern:           # CT; the sequential test has `traffic_patterns: [ ... ]`
//     matrix_file: m.txt       # required
//     shards: 1                # requests each per-peer transfer is split into
//     mem_type: cuda           # cuda|vram (GPU memory) or cpu|dram (host memory)
//     xfer_op: WRITE           # WRITE (sender pushes) or READ (receiver pulls)
//     sleep_before_launch_sec: 0   # sequential only: simulated compute before the pattern
//     sleep_after_launch_sec: 0
//     metadata: {isl: 1000}    # free-form, carried into the report
import path from 'node:path';
import type { MemoryKind } from '../memory.ts';
import type { XferOp } from '../backends/types.ts';
import { MatrixError, readMatrixFile, truncationNote, type TransferMatrix } from '../matrix.ts';
import { matrixFileNote, MatrixFileNotFound, resolveMatrixFile } from './matrix-file.ts';
import { BenchConfigError, readYamlSource, type KeyPath, type YamlSource } from './yaml-source.ts';

export const memTypes = ['cuda', 'vram', 'cpu', 'dram'] as const;
export type MemType = (typeof memTypes)[number];

export interface TrafficPattern {
  index: number;
  /** Absolute path of the matrix file. */
  matrixFile: string;
  matrix: TransferMatrix;
  shards: number;
  memType: MemType;
  memory: MemoryKind;
  op: XferOp;
  sleepBeforeSec: number;
  sleepAfterSec: number;
  metadata: Record<string, unknown>;
  /** What the run says about reading it: which file a relative path found, cells truncated to whole bytes. */
  notes: string[];
}

export interface CtConfig {
  iters: number;
  warmupIters: number;
  pattern: TrafficPattern;
}

const PATTERN_KEYS = ['matrix_file', 'shards', 'mem_type', 'xfer_op', 'sleep_before_launch_sec', 'sleep_after_launch_sec', 'metadata'];

/**
 * Keys of a pattern that kvbench's ct-perftest reads no further than the YAML (main.py ct_perftest
 * builds its TrafficPattern from matrix_file, shards, mem_type and xfer_op only): the CT perftest
 * takes them as kvbench does, applies none of them, and says so.
 */
export const CT_IGNORED_PATTERN_KEYS = ['sleep_before_launch_sec', 'sleep_after_launch_sec', 'metadata'] as const;

export function ctIgnoredKeyReason(key: string): string {
  return `${key} is not applied by ct-perftest, which runs its iterations back to back as kvbench's ct-perftest does (it reads only matrix_file, shards, mem_type and xfer_op of a traffic_pattern); it is the sequential test's`;
}

/** cuda/vram are GPU memory, cpu/dram host memory (NIXL's VRAM_SEG/DRAM_SEG). */
export function memoryOf(memType: MemType): MemoryKind {
  return memType === 'cuda' || memType === 'vram' ? 'gpu' : 'host';
}

/** Reads a CT perftest config; `ranks` (when known) must be the matrix size. */
export function readCtConfig(file: string, ranks?: number): CtConfig {
  const src = readYamlSource(file);
  const top = mapping(src, [], ['iters', 'warmup_iters', 'traffic_pattern']);
  if (top.traffic_pattern === undefined) throw src.error(['traffic_pattern'], 'is required (the pattern to run)');
  const pattern = readPattern(src, ['traffic_pattern'], 0, ranks);
  const raw = top.traffic_pattern as Record<string, unknown>;
  for (const key of CT_IGNORED_PATTERN_KEYS) {
    if (raw[key] !== undefined) pattern.notes.push(`${src.where(['traffic_pattern', key])}: ${ctIgnoredKeyReason(key)}`);
  }
  return {
    iters: integer(src, ['iters'], top.iters, 1, 1),
    warmupIters: integer(src, ['warmup_iters'], top.warmup_iters, 0, 0),
    pattern,
  };
}

/** Reads a sequential CT perftest config (e.g. matgen's metadata.yaml); every matrix must fit `ranks`. */
export function readSequentialConfig(file: string, ranks?: number): TrafficPattern[] {
  const src = readYamlSource(file);
  const top = mapping(src, [], ['traffic_patterns']);
  const list = top.traffic_patterns;
  if (!Array.isArray(list) || list.length === 0) throw src.error(['traffic_patterns'], 'must be a non-empty list of traffic patterns');
  const patterns = list.map((_, i) => readPattern(src, ['traffic_patterns', i], i, ranks));
  const size = patterns[0].matrix.length;
  const odd = patterns.find((p) => p.matrix.length !== size);
  if (odd) {
    throw src.error(['traffic_patterns', odd.index, 'matrix_file'], `${odd.matrixFile} is ${odd.matrix.length} x ${odd.matrix.length}, the first pattern's matrix is ${size} x ${size}`);
  }
  return patterns;
}

function readPattern(src: YamlSource, at: KeyPath, index: number, ranks: number | undefined): TrafficPattern {
  const raw = mapping(src, at, PATTERN_KEYS);
  if (typeof raw.matrix_file !== 'string' || raw.matrix_file === '') throw src.error([...at, 'matrix_file'], 'is required: the path of the matrix file');
  let matrixFile: string;
  let matrix: TransferMatrix;
  const notes: string[] = [];
  try {
    const resolved = resolveMatrixFile(path.dirname(src.file), raw.matrix_file);
    matrixFile = resolved.file;
    const read = readMatrixFile(matrixFile, ranks);
    matrix = read.matrix;
    const found = matrixFileNote(raw.matrix_file, resolved);
    if (found) notes.push(found);
    if (read.truncation) notes.push(truncationNote(matrixFile, read.truncation));
  } catch (err) {
    if (err instanceof MatrixError || err instanceof MatrixFileNotFound) throw new BenchConfigError(`${src.where([...at, 'matrix_file'])}: ${err.message}`);
    throw err;
  }
  const memType = choice(src, [...at, 'mem_type'], raw.mem_type, memTypes, 'cuda');
  const metadata = raw.metadata ?? {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw src.error([...at, 'metadata'], 'must be a mapping');
  return {
    index,
    matrixFile,
    matrix,
    shards: integer(src, [...at, 'shards'], raw.shards, 1, 1),
    memType,
    memory: memoryOf(memType),
    op: choice(src, [...at, 'xfer_op'], raw.xfer_op, ['WRITE', 'READ'] as const, 'WRITE'),
    sleepBeforeSec: seconds(src, [...at, 'sleep_before_launch_sec'], raw.sleep_before_launch_sec),
    sleepAfterSec: seconds(src, [...at, 'sleep_after_launch_sec'], raw.sleep_after_launch_sec),
    metadata: metadata as Record<string, unknown>,
    notes,
  };
}

function mapping(src: YamlSource, at: KeyPath, keys: string[]): Record<string, unknown> {
  let node: unknown = src.data;
  for (const k of at) node = (node as Record<string | number, unknown>)[k];
  if (node === null || typeof node !== 'object' || Array.isArray(node)) throw src.error(at, 'must be a mapping');
  for (const key of Object.keys(node)) {
    if (!keys.includes(key)) throw src.error([...at, key], `is not a known key here (known: ${keys.join(', ')})`);
  }
  return node as Record<string, unknown>;
}

function integer(src: YamlSource, at: KeyPath, value: unknown, fallback: number, min: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw src.error(at, `must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  return value;
}

function seconds(src: YamlSource, at: KeyPath, value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw src.error(at, `must be a number of seconds >= 0, got ${JSON.stringify(value)}`);
  return value;
}

/** Case-insensitive (NIXL spells them VRAM, DRAM...); returns the canonical spelling. */
function choice<T extends string>(src: YamlSource, at: KeyPath, value: unknown, options: readonly T[], fallback: T): T {
  if (value === undefined || value === null) return fallback;
  const found = options.find((o) => typeof value === 'string' && o.toLowerCase() === value.toLowerCase());
  if (!found) throw src.error(at, `must be one of ${options.join(', ')}, got ${JSON.stringify(value)}`);
  return found;
}
