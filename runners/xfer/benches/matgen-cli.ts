// `disagg-bench matgen [generate] ...`: the KV-cache transfer matrix generator (../matgen.ts) as a
// command, with kvbench's option names and defaults (`inference_workload_matgen.py generate ...`
// runs unchanged with `disagg-bench matgen generate ...`). Writes matrix_<i>.txt (exact bytes) and a
// metadata.yaml that `disagg-bench sequential-ct-perftest <results-dir>/metadata.yaml` runs as is.
//   disagg-bench matgen --model llama-405b --num-prefill-nodes 1 --num-decode-nodes 1 \
//     --prefill-tp 4 --decode-tp 8 --num-user-requests 20 --results-dir out/llama
import path from 'node:path';
import {
  cellFormats, computeModels, defaultResultsDir, generatePatterns, kvBytesPerToken, MATGEN_DEFAULTS, MODEL_PRESETS, shortWorkerNotes, workerPairings, writePatterns,
  type CellFormat, type GeneratedPattern, type MatgenOptions, type ModelShape,
} from '../matgen.ts';
import { totalBytes } from '../matrix.ts';
import { memTypes } from './traffic-pattern.ts';
import { UsageError, choiceOption, intOption, numberOption } from './common/options.ts';
import { readArgs, type ArgSpec } from '../../common/args/read-args.ts';

const SHAPE_OPTIONS = ['hidden-size', 'num-layers', 'num-heads', 'num-kv-heads', 'dtype-size'] as const;

export const matgenUsage = `usage: disagg-bench matgen [generate] --num-prefill-nodes N --num-decode-nodes N [--results-dir matrices_<ranks>ranks]
    (--model ${Object.keys(MODEL_PRESETS).join('|')} | --hidden-size H --num-layers L --num-heads A --num-kv-heads K --dtype-size B)
    [--prefill-tp 1] [--prefill-pp 1] [--prefill-cp 1] [--decode-tp 1] [--decode-pp 1] [--decode-cp 1]
    [--num-user-requests 1000] [--batch-size 1] [--isl-mean 16000] [--isl-scale 10000] [--min-isl 1000] [--max-isl 128000]
    [--max-batch-mem 100e9] [--ppn 8] [--rail-optimized|--no-rail-optimized]
    [--compute-model ${computeModels.join('|')}] [--seed N (random; default 0)] [--pair-workers ${workerPairings.join('|')}]
    [--cell-format ${cellFormats.join('|')}]   (exact: whole bytes; upstream: kvbench's 759.51M cells and metadata.yaml, byte for byte)
    [--mem-type cuda|vram|cpu|dram] [--xfer-op WRITE|READ] [--shards N]   (written into every pattern)`;

const int = { type: 'string' } as const;

export interface MatgenCommand {
  options: MatgenOptions;
  /** --results-dir, else kvbench's default matrices_<ranks>ranks. */
  resultsDir: string;
  /** Fields written into every pattern of metadata.yaml. */
  patternFields: Record<string, string | number>;
  cellFormat: CellFormat;
}

/** matgen's words: kvbench's options, read as click reads them (the argument layer's click style). */
export const matgenArgSpec = {
  style: 'click',
  positionals: true,
  switches: ['rail-optimized'],
  options: {
    'num-user-requests': int, 'batch-size': int, 'num-prefill-nodes': int, 'num-decode-nodes': int,
    'prefill-tp': int, 'prefill-pp': int, 'prefill-cp': int, 'decode-tp': int, 'decode-pp': int, 'decode-cp': int,
    model: { type: 'string' }, 'hidden-size': int, 'num-layers': int, 'num-heads': int, 'num-kv-heads': int, 'dtype-size': int,
    'isl-mean': int, 'isl-scale': int, 'min-isl': int, 'max-isl': int, 'max-batch-mem': int, ppn: int,
    'rail-optimized': { type: 'boolean' }, 'no-rail-optimized': { type: 'boolean' }, 'compute-model': { type: 'string' },
    seed: int, 'results-dir': { type: 'string' },
    'mem-type': { type: 'string' }, 'xfer-op': { type: 'string' }, shards: int,
    'pair-workers': { type: 'string' }, 'cell-format': { type: 'string' },
  },
} as const satisfies ArgSpec;

export function parseMatgenArgs(argv: string[]): MatgenCommand {
  const { values, positionals } = readArgs(argv, matgenArgSpec);
  const fail = (message: string): never => {
    throw new UsageError(`${message}\n${matgenUsage}`);
  };
  // kvbench's script is a click group whose one command is `generate`.
  const extra = positionals[0] === 'generate' ? positionals.slice(1) : positionals;
  if (extra.length > 0) fail(`unexpected argument '${extra[0]}'`);
  const required = (name: 'num-prefill-nodes' | 'num-decode-nodes') =>
    values[name] === undefined ? fail(`--${name} is required`) : intOption(name, values[name], 1);
  /** An integer option (a number when `integer` is false) with its default. */
  const n = (name: keyof typeof values & string, fallback: number, min = 1, integer = true) => {
    const raw = values[name] as string | undefined;
    if (raw === undefined) return fallback;
    return integer ? intOption(name, raw, min) : numberOption(name, raw, min);
  };
  /** An int option kvbench takes as click's INT takes any (int(): `1_500`, `-3`, `0`), with its default. */
  const anyInt = (name: keyof typeof values & string, fallback: number) => {
    const raw = values[name] as string | undefined;
    return raw === undefined ? fallback : clickInt(name, raw);
  };
  const options: MatgenOptions = {
    ...MATGEN_DEFAULTS,
    // 0 or less as kvbench takes it (range(n) is empty): no batches, a metadata.yaml with no patterns
    numUserRequests: Math.max(0, anyInt('num-user-requests', MATGEN_DEFAULTS.numUserRequests)),
    // 0 or less as kvbench takes it: `len(batch) >= batch_size` closes every batch at its first request
    batchSize: anyInt('batch-size', MATGEN_DEFAULTS.batchSize),
    prefillNodes: required('num-prefill-nodes'),
    decodeNodes: required('num-decode-nodes'),
    prefill: { tp: n('prefill-tp', 1), pp: n('prefill-pp', 1), cp: n('prefill-cp', 1) },
    decode: { tp: n('decode-tp', 1), pp: n('decode-pp', 1), cp: n('decode-cp', 1) },
    model: modelShape(values, fail),
    // any int, as kvbench: the normal sample is clipped to [min-isl, max-isl]
    islMean: anyInt('isl-mean', MATGEN_DEFAULTS.islMean),
    islScale: islScale(values['isl-scale'] as string | undefined),
    islMin: n('min-isl', MATGEN_DEFAULTS.islMin),
    islMax: n('max-isl', MATGEN_DEFAULTS.islMax),
    // any number, as kvbench's click float: at 0 (or below) every request closes its batch
    maxBatchMemBytes: n('max-batch-mem', MATGEN_DEFAULTS.maxBatchMemBytes, -Infinity, false),
    ranksPerNode: n('ppn', MATGEN_DEFAULTS.ranksPerNode),
    railOptimized: values['rail-optimized'] === true,
    computeModel: values['compute-model'] === undefined ? MATGEN_DEFAULTS.computeModel : choiceOption('compute-model', values['compute-model'], computeModels),
    seed: n('seed', MATGEN_DEFAULTS.seed, 0),
    pairWorkers: values['pair-workers'] === undefined ? MATGEN_DEFAULTS.pairWorkers : choiceOption('pair-workers', values['pair-workers'], workerPairings),
  };
  const resultsDir = values['results-dir'] ?? defaultResultsDir(options);
  const patternFields: Record<string, string | number> = {};
  if (values['mem-type'] !== undefined) patternFields.mem_type = choiceOption('mem-type', values['mem-type'], memTypes);
  if (values['xfer-op'] !== undefined) patternFields.xfer_op = choiceOption('xfer-op', values['xfer-op'], ['WRITE', 'READ'] as const);
  if (values.shards !== undefined) patternFields.shards = n('shards', 1);
  const cellFormat = values['cell-format'] === undefined ? 'exact' : choiceOption('cell-format', values['cell-format'], cellFormats);
  return { options, resultsDir, patternFields, cellFormat };
}

/** What kvbench does with these inputs without saying so: said here, the run unchanged. */
function inputNotes(o: MatgenOptions): string[] {
  const notes = shortWorkerNotes(o);
  if (o.islMin > o.islMax) notes.push(`--min-isl ${o.islMin} is above --max-isl ${o.islMax}: as kvbench clips (min(max(min_isl, isl), max_isl)), every ISL is ${o.islMax}`);
  if (o.numUserRequests === 0) notes.push('--num-user-requests 0 or less: no batches, so metadata.yaml lists no traffic patterns (as kvbench writes it)');
  if (o.batchSize < 1) notes.push(`--batch-size ${o.batchSize}: every request closes its batch (kvbench's len(batch) >= batch_size), as with 1`);
  return notes;
}

/** click's INT: what Python's int() takes (blanks, one sign, digits with single underscores), else click's own words. */
function clickInt(name: string, raw: string): number {
  if (!/^\s*[+-]?\d(?:_?\d)*\s*$/.test(raw)) throw new UsageError(`Invalid value for '--${name}': '${raw}' is not a valid integer.`);
  const n = Number(raw.replace(/_/g, '').trim());
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} ${raw}: beyond 2^53 - 1, not held exactly`);
  return n;
}

/** The ISLs' normal scale: numpy's normal() refuses a negative one ("scale < 0"), so is it refused here. */
function islScale(raw: string | undefined): number {
  if (raw === undefined) return MATGEN_DEFAULTS.islScale;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--isl-scale takes a number, got '${raw}'`);
  if (n < 0) throw new UsageError(`--isl-scale ${raw}: the ISLs' normal distribution needs a scale >= 0 (kvbench's numpy.random.normal refuses it: scale < 0)`);
  return n;
}

function modelShape(values: Record<string, unknown>, fail: (m: string) => never): ModelShape {
  const given = SHAPE_OPTIONS.filter((o) => values[o] !== undefined);
  const model = values.model as string | undefined;
  if (model !== undefined) {
    if (given.length > 0) fail(`--model ${model} fixes the shape: drop --${given.join(', --')}, or drop --model and give all of --${SHAPE_OPTIONS.join(', --')}`);
    return MODEL_PRESETS[model] ?? fail(`unknown --model '${model}' (presets: ${Object.keys(MODEL_PRESETS).join(', ')})`);
  }
  if (given.length < SHAPE_OPTIONS.length) {
    fail(`give --model, or the whole shape: missing --${SHAPE_OPTIONS.filter((o) => !given.includes(o)).join(', --')}`);
  }
  const v = (o: (typeof SHAPE_OPTIONS)[number]) => intOption(o, values[o] as string, 1);
  return { hidden: v('hidden-size'), layers: v('num-layers'), heads: v('num-heads'), kvHeads: v('num-kv-heads'), dtypeSize: v('dtype-size') };
}

export async function matgenMain(argv: string[]): Promise<number> {
  const { options, resultsDir, patternFields, cellFormat } = parseMatgenArgs(argv);
  let patterns: GeneratedPattern[];
  try {
    patterns = generatePatterns(options);
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^matgen: /, '')); // the CLI names the command already
  }
  const metadata = writePatterns(resultsDir, patterns, patternFields, cellFormat);
  for (const note of inputNotes(options)) process.stdout.write(`matgen: note: ${note}\n`);
  const last = patterns[patterns.length - 1];
  const open = last && last.requests.length < options.batchSize && last.isl * kvBytesPerToken(options.model) <= options.maxBatchMemBytes;
  if (open) process.stdout.write(`matgen: the last batch is incomplete, with size ${last.requests.length}\n`);
  const ranks = (options.prefillNodes + options.decodeNodes) * options.ranksPerNode;
  const bytes = patterns.reduce((a, p) => a + totalBytes(p.matrix), 0);
  const compute = patterns.reduce((a, p) => a + p.computeSec, 0);
  process.stdout.write(
    `matgen: ${patterns.length} traffic patterns from ${options.numUserRequests} user requests (batch size ${options.batchSize}) for ${ranks} ranks, ` +
      `${(bytes / 1e9).toFixed(3)} GB in all, ${compute.toFixed(3)} s of simulated prefill; ${path.resolve(metadata)}\n`,
  );
  return 0;
}
