// What the CT perftest kinds (ct-perftest, sequential-ct-perftest, matgen) share: the schema of a
// traffic pattern and of the sequential run options, the matrix and memory-type rules, the
// metrics, and copying matrices into the job's log folder so the job records what it ran.
import path from 'node:path';
import type { JsonSchema, KeyPath, RuleViolation } from '../../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../../metrics/metric.ts';
import { named } from '../../../metrics/headline-picks.ts';
import { createHash } from 'node:crypto';
import { checkMatrixText, MatrixError } from '../../../../runners/xfer/matrix.ts';
import { matrixFileNote, MatrixFileNotFound, resolveMatrixFile } from '../../../../runners/xfer/benches/matrix-file.ts';
import { memoryOf, memTypes, type MemType } from '../../../../runners/xfer/benches/traffic-pattern.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../../../../runners/common/read-file.ts';
import { ConfigError, formatKeyPath } from '../../../config/issue.ts';
import type { FlagCommand } from '../job/rank-command.ts';
import { int } from './kind-values.ts';

const either = (values: readonly string[]) => ({ enum: [...values, ...values.map((v) => v.toUpperCase()), ...values.map((v) => v.toLowerCase())] });
const seconds = { type: 'number', minimum: 0 };

/**
 * One pattern as the seed writes it; the sleeps and the free-form metadata are the sequential
 * test's (the CT kind takes them too, only to refuse them with the reason: ctPerftestKind.rules).
 */
export function patternSchema(): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['matrix_file'],
    properties: {
      matrix_file: { type: 'string', minLength: 1 },
      shards: int(1),
      mem_type: either(memTypes),
      xfer_op: either(['WRITE', 'READ']),
      sleep_before_launch_sec: seconds,
      sleep_after_launch_sec: seconds,
      metadata: { type: 'object' },
    },
  };
}

/** How the sequential test runs its patterns (its CLI options). */
export const sequentialRunProperties = {
  sleep_scale: { type: 'number', minimum: 0 },
  isolation_iters: int(1),
  warmup_iters: int(0),
  workload_iters: int(1),
  verify_buffers: { type: 'boolean' },
  print_recv_buffers: { type: 'boolean' },
  share_buffers: { type: 'boolean' },
  sleep_before_launch: { type: 'boolean' },
};

export interface SequentialRunOptions {
  sleep_scale?: number;
  isolation_iters?: number;
  warmup_iters?: number;
  workload_iters?: number;
  verify_buffers?: boolean;
  print_recv_buffers?: boolean;
  share_buffers?: boolean;
  /** Sleep each pattern's sleep_before_launch_sec (kvbench never does; default false). */
  sleep_before_launch?: boolean;
}

export const CT_JSON = 'ct_perftest.json';
export const SEQUENTIAL_JSON = 'sequential_ct_perftest.json';

export const ctMetrics = (): MetricSpec[] => [
  {
    logFile: CT_JSON,
    extractor: 'ct-perftest',
    names: ['TOTAL_LATENCY_S', 'AVG_LATENCY_PER_ITER_S', 'AVG_ITER_LATENCY_MS', 'TOTAL_SIZE_GB', 'AGGREGATE_BW_GBPS', 'AVG_BW_GBPS', 'BW_GBPS', 'MIN_BW_GBPS', 'MAX_BW_GBPS'],
  },
];

/** CT perftest's headline: the average latency per iteration (kvbench's `Avg latency/iter (s)`). */
export const ctHeadline = (metrics: readonly Metric[]): Metric[] => named(metrics, 'AVG_LATENCY_PER_ITER_S');

/** The sequential CT perftest's headline: the workload's latency, per workload iteration. */
export const sequentialHeadline = (metrics: readonly Metric[]): Metric[] => named(metrics, 'WORKLOAD_LATENCY_MS');

export const sequentialMetrics = (): MetricSpec[] => [
  {
    logFile: SEQUENTIAL_JSON,
    extractor: 'sequential-ct-perftest',
    names: ['LATENCY_MS', 'ISOLATED_LATENCY_MS', 'MEAN_BW_GBPS', 'TRANSFER_SIZE_GB', 'WORKLOAD_LATENCY_MS'],
  },
];

/** The ranks' `sequential-ct-perftest` on the config file the job writes, with the run options set (defaults are the command's). */
export function sequentialCommand(configFile: (logDir: string) => string): FlagCommand<SequentialRunOptions> {
  return {
    command: 'sequential-ct-perftest',
    positional: (logDir) => [configFile(logDir)],
    flags: [
      ['--json-output-path', (_o, logDir) => path.join(logDir, SEQUENTIAL_JSON)],
      ['--sleep-scale', 'sleep_scale'],
      ['--isolation-iters', 'isolation_iters'],
      ['--warmup-iters', 'warmup_iters'],
      ['--workload-iters', 'workload_iters'],
      ['--verify-buffers', 'verify_buffers', 'switch'],
      ['--print-recv-buffers', 'print_recv_buffers', 'switch'],
      ['--share-buffers', 'share_buffers', 'switch'],
      ['--sleep-before-launch', 'sleep_before_launch', 'switch'],
    ],
  };
}

/** Shared buffers put every pattern in one window: the bytes cannot be verified then. */
export function checkSequentialRunOptions(o: SequentialRunOptions, section: string): RuleViolation[] {
  if (!(o.share_buffers && o.verify_buffers)) return [];
  return [{ path: [section, 'share_buffers'], message: 'shared buffers put every pattern in the same window, so verify_buffers cannot check them: drop one' }];
}

/**
 * What each matrix file held when a config naming it was last validated in this process (sha-256
 * of its bytes, by resolved path): the job runs that text or fails naming the change.
 */
const validated = new Map<string, string>();
let rechecking = false;
/** The text's sha-256, fed a MiB at a time: a matrix of the largest size allowed is not copied whole. */
function digest(text: string): string {
  const hash = createHash('sha256');
  for (let at = 0; at < text.length; at += 1 << 20) hash.update(text.slice(at, at + (1 << 20)));
  return hash.digest('hex');
}

/**
 * Runs `check` (a kind's rules, again at the job's build) comparing each matrix file with what was
 * validated instead of taking it as the new validated text.
 */
export function recheckAgainstValidation<T>(check: () => T): T {
  rechecking = true;
  try {
    return check();
  } finally {
    rechecking = false;
  }
}

/** Why `text` of `file` is not what was validated, or undefined (the same, or never validated here). */
function changeSinceValidation(file: string, text: string): string | undefined {
  const before = validated.get(file);
  const now = digest(text);
  if (before === undefined || before === now) return undefined;
  return `${file} is not the text validated (sha-256 ${before.slice(0, 12)}... then, ${now.slice(0, 12)}... now, ${Buffer.byteLength(text)} bytes); what runs must be what was checked: start the run again to validate it`;
}

/** A matrix file (relative: the config's folder, else the working directory) that exists, parses, and is ranks x ranks. */
export function checkMatrixFile(configDir: string, file: string, ranks: number, at: KeyPath): RuleViolation[] {
  try {
    const resolved = resolveMatrixFile(configDir, file).file;
    let text: string;
    try {
      text = readTextFileSync(resolved, READ_LIMITS.matrix);
    } catch (err) {
      if (err instanceof FileReadError) return [{ path: at, message: `${resolved}: the matrix file ${err.reason}` }];
      throw err;
    }
    // Checked without holding its cells: a file of the largest size allowed costs its text alone.
    checkMatrixText(text, resolved, ranks);
    const changed = rechecking ? changeSinceValidation(resolved, text) : undefined;
    if (changed) return [{ path: at, message: changed }];
    if (!rechecking) validated.set(resolved, digest(text));
    return [];
  } catch (err) {
    if (err instanceof MatrixError || err instanceof MatrixFileNotFound) return [{ path: at, message: err.message }];
    throw err;
  }
}

/** shm moves host memory only, cuda and nccl GPU memory only (ucx: host, and GPU if built with CUDA). */
export function checkMemType(backend: string, memType: string | undefined, at: KeyPath): RuleViolation[] {
  const type = (memType ?? 'cuda').toLowerCase() as MemType;
  const memory = memoryOf(type);
  const wanted = backend === 'shm' ? 'host' : backend === 'cuda' || backend === 'nccl' ? 'gpu' : memory;
  if (memory === wanted) return [];
  const fix = wanted === 'host' ? 'cpu or dram' : 'cuda or vram';
  return [{ path: at, message: `${memType === undefined ? 'the default mem_type cuda' : `mem_type ${memType}`} is ${memory === 'gpu' ? 'GPU' : 'host'} memory, but backend ${backend} moves ${wanted === 'gpu' ? 'GPU' : 'host'} memory: set mem_type to ${fix}` }];
}

/**
 * A matrix file's text for the job's artefacts, checked again as it is read: the file may have
 * changed since the config was validated, and what runs must be what was checked. A file that no
 * longer passes fails the test before anything is submitted, with the rule it breaks now; one that
 * passes but is not the text validated fails naming the change.
 */
export function matrixText(configDir: string, file: string, ranks: number, at: KeyPath): string {
  const fail = (reason: string): never => {
    throw new ConfigError([{ file, path: formatKeyPath(at), message: `the matrix file changed since the config was validated and no longer passes: ${reason}; not run` }]);
  };
  let resolved: string;
  try {
    resolved = resolveMatrixFile(configDir, file).file;
  } catch (err) {
    if (err instanceof MatrixFileNotFound) return fail(err.message);
    throw err;
  }
  let text: string;
  try {
    text = readTextFileSync(resolved, READ_LIMITS.matrix);
  } catch (err) {
    if (err instanceof FileReadError) return fail(`${resolved} ${err.reason}`);
    throw err;
  }
  try {
    checkMatrixText(text, resolved, ranks);
  } catch (err) {
    if (err instanceof MatrixError) return fail(err.message);
    throw err;
  }
  const changed = changeSinceValidation(resolved, text);
  if (changed) throw new ConfigError([{ file, path: formatKeyPath(at), message: `the matrix file changed since the config was validated: ${changed}; not run` }]);
  return text;
}

/** matrix_sources.txt, a job artefact: which file each copy in the log folder was read from, and why there. */
export function matrixSources(configDir: string, copies: [copy: string, file: string][]): string {
  return copies.map(([copy, file]) => `${copy} <- ${matrixFileNote(file, resolveMatrixFile(configDir, file)) ?? `matrix_file ${file}: absolute`}\n`).join('');
}
