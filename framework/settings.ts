// Every environment variable the framework reads, parsed in one place with its default.
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_TIMER_SECONDS, TIMER_REASON } from '../runners/common/number-bounds.ts';
import { DisaggBenchError } from '../runners/common/errors.ts';
import type { ErrorCategory } from '../runners/common/errors.ts';

/** The package root (where package.json, runners/ and bin/ are). */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Settings {
  /** Folder holding test_configs/ and testlist/ (WORK_DIR; default: the package root). */
  workDir: string;
  /** Results, logs and the ledger (OUTPUT_PATH; default: <package root>/results). */
  outputPath: string;
  /** Jobs per batch (DISAGG_BATCH_SIZE; default 5; 0 = all at once). */
  batchSize: number;
  /** A warning about an invalid DISAGG_BATCH_SIZE, shown once. */
  batchSizeWarning?: string;
  /** DEBUG_MODE=1: submit nothing, replay logs already in OUTPUT_PATH/slurm_logs/<test id>/. */
  debugMode: boolean;
  debugJobId?: string;
  /** RESUME=1: pick up jobs of an interrupted run from the ledger instead of submitting again. */
  resume: boolean;
  /** DISAGG_FAIL_UNFIT=1: a config the jobs' nodes cannot hold runs (and fails) instead of being skipped. */
  failUnfit: boolean;
  /**
   * SCHEDULER: a registered scheduler's name (scheduler/registry.ts checks it); undefined = the
   * first available one (slurm when sbatch is on PATH, else local).
   */
  scheduler?: string;
  /** DISAGG_TEST_LIST, relative to WORK_DIR. */
  testList?: string;
  /** Seconds a job may wait in the queue on top of its own time limit (DISAGG_QUEUE_ALLOWANCE_SEC). */
  queueAllowanceSec: number;
  /** Upper bound of the poll interval in seconds (DISAGG_POLL_MAX_SEC, default 10). */
  pollMaxSec: number;
  /** DISAGG_CSV_EXTRA_ROWS=1: CSV rows also for metrics upstream does not write (request counts, accuracy). */
  csvExtraRows: boolean;
  /** DISAGG_PRINT_METRICS=1: the end of a run also lists every metric of every test (the digest shows the headline). */
  printMetrics: boolean;
  /** Performance history (framework/history/): where it is kept and how a run uses it. */
  history: HistorySettings;
}

/** Where the history store is: DISAGG_HISTORY unset = a DuckDB file in OUTPUT_PATH. */
export type HistoryTarget = { kind: 'off' } | { kind: 'duckdb'; file: string } | { kind: 'postgres'; url: string };

/**
 * What DISAGG_RUN_KIND takes: upstream's post-merge and pre-merge (PR) runs, and a local run (the
 * default: a laptop or an experiment), judged as pre-merge runs are and never feeding a baseline.
 */
export const RUN_KINDS = ['post-merge', 'pre-merge', 'local'] as const;
export type RunKind = (typeof RUN_KINDS)[number];
/** What DISAGG_REGRESSION takes. */
export const REGRESSION_MODES = ['fail', 'warn', 'off'] as const;
export type RegressionMode = (typeof REGRESSION_MODES)[number];

export interface HistorySettings {
  /** DISAGG_HISTORY: off, a postgres:// URL, or a file (DuckDB); default OUTPUT_PATH/history.duckdb. */
  target: HistoryTarget;
  /** DISAGG_RUN_KIND (default local): the default threshold, and whether the run feeds later baselines (post-merge only). */
  runKind: RunKind;
  /** DISAGG_REGRESSION; unset = upstream's automatic choice: fail for pre-merge, warn for post-merge. */
  regression: RegressionMode;
  /** DISAGG_REGRESSION_THRESHOLD: percent, for every metric a config does not set (default 5 / 10 by run kind). */
  thresholdPercent?: number;
  /** DISAGG_RUN_LABEL: a name for the run, kept with its records (`history compare` accepts it). */
  runLabel?: string;
  /** The regression gate's settings (framework/history/gate.ts). */
  gate: GateSettings;
}

export interface GateSettings {
  /**
   * DISAGG_GATE_METRICS (default `headline`): which metrics can fail the gate, comma-separated:
   * `headline` (each test type's headline metrics), `all` (every metric with a direction), a
   * metric name (opted in), `-NAME` (opted out). A config's `benchmark.regression.<M>.gate` wins.
   */
  metrics: string[];
  /** DISAGG_GATE_RULE (default robust): the alerting gate, or upstream's threshold over its P95 / P5 baseline. */
  rule: GateRuleName;
  /** DISAGG_GATE_ALPHA (default 0.05): the share of unchanged runs allowed to raise a new alert (robust rule). */
  alpha: number;
  /** DISAGG_GATE_MIN_RUNS (default 5): post-merge runs a series' baseline needs before it is judged (robust rule). */
  minRuns: number;
  /** DISAGG_GATE_MIN_DAYS (default 3): days of history a series needs before it gates (upstream rule). */
  minDays: number;
  /** DISAGG_GATE_NOISE_K (default 2.75): a change must also exceed k standard deviations of the series' daily means (upstream rule). */
  noiseK: number;
  /** DISAGG_BRANCH: the branch the run's records belong to (default: the git branch of WORK_DIR). */
  branch?: string;
  /** DISAGG_BASELINE_BRANCH (default main): where pre-merge runs take their baselines. */
  baselineBranch: string;
  /** DISAGG_HISTORY_LOCK_WAIT_SEC (default 30): how long a run waits for a DuckDB file locked by another process. */
  lockWaitSec: number;
}

export const GATE_RULES = ['robust', 'upstream'] as const;
export type GateRuleName = (typeof GATE_RULES)[number];

export const DEFAULT_GATE: GateSettings = { metrics: ['headline'], rule: 'robust', alpha: 0.05, minRuns: 5, minDays: 3, noiseK: 2.75, baselineBranch: 'main', lockWaitSec: 30 };

/**
 * The gate's variables as its help texts and docs say them: one table, so a default said anywhere
 * is the default the code uses.
 */
export const GATE_VARIABLES: readonly { name: string; value: string; meaning: string }[] = [
  { name: 'DISAGG_GATE_RULE', value: DEFAULT_GATE.rule, meaning: 'robust: alerts from run-level statistics; upstream: its threshold over the P95 / P5 baseline' },
  { name: 'DISAGG_GATE_ALPHA', value: String(DEFAULT_GATE.alpha), meaning: 'share of unchanged runs allowed to raise a new alert (split over the run\'s gating figures, each counted by its chance to alarm on noise)' },
  { name: 'DISAGG_GATE_MIN_RUNS', value: String(DEFAULT_GATE.minRuns), meaning: 'post-merge runs a series needs before it is judged' },
  { name: 'DISAGG_GATE_METRICS', value: DEFAULT_GATE.metrics.join(','), meaning: 'which figures gate: headline, all, NAME, -NAME' },
  { name: 'DISAGG_GATE_MIN_DAYS', value: String(DEFAULT_GATE.minDays), meaning: 'upstream rule: days of history before a series gates' },
  { name: 'DISAGG_GATE_NOISE_K', value: String(DEFAULT_GATE.noiseK), meaning: 'upstream rule: standard deviations of the daily means a change must also exceed (0: the threshold alone)' },
  { name: 'DISAGG_BASELINE_BRANCH', value: DEFAULT_GATE.baselineBranch, meaning: 'the branch a pre-merge run is judged against (its current level)' },
];

/** The gate's variables, one per line, for a help text. */
export const gateVariablesHelp = (indent = '  ') => GATE_VARIABLES.map((v) => `${indent}${v.name} (default ${v.value}): ${v.meaning}`).join('\n');

export const HISTORY_FILE = 'history.duckdb';

/**
 * The environment variables of a run, by the setting each sets: the one spelling of each name.
 * readSettings reads them by these names, `disagg-bench run`'s options set them (run/options.ts)
 * and the commands' --help quotes them from here, so a help text cannot name a variable that
 * nothing reads.
 */
export const SETTING_VARIABLES = {
  workDir: 'WORK_DIR',
  outputPath: 'OUTPUT_PATH',
  testList: 'DISAGG_TEST_LIST',
  gpuType: 'GPU_TYPE',
  scheduler: 'SCHEDULER',
  batchSize: 'DISAGG_BATCH_SIZE',
  debugMode: 'DEBUG_MODE',
  resume: 'RESUME',
  history: 'DISAGG_HISTORY',
  runKind: 'DISAGG_RUN_KIND',
  regression: 'DISAGG_REGRESSION',
  runLabel: 'DISAGG_RUN_LABEL',
} as const;

/**
 * Names a user may set for a setting that is spelled otherwise here, and the name to use: set
 * without the real one, such a variable is refused (it would otherwise be silently ignored).
 */
const MISSPELLED_VARIABLES: Readonly<Record<string, string>> = { TEST_LIST: SETTING_VARIABLES.testList };

export const DEFAULT_BATCH_SIZE = 5;

/** What DISAGG_PROGRESS takes (framework/results/progress-stream.ts). */
export const PROGRESS_MODES = ['plain', 'live', 'off'] as const;

/**
 * A variable a user set to a value the framework cannot use: one line per variable, naming it,
 * its value and what is expected. Raised before anything is submitted.
 */
export class SettingsError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'usage';
  }
  override name = 'SettingsError';
  constructor(readonly problems: string[]) {
    // Each line names its variable and value and says what is expected; the first variable is the place.
    super(problems.join('\n'), { place: /^[A-Za-z_][A-Za-z0-9_]*/.exec(problems[0] ?? '')?.[0] });
  }
}

const shown = (raw: string) => JSON.stringify(raw);

/**
 * A whole number as Python's int() reads a str: surrounding whitespace, one sign, decimal digits
 * with single underscores between them (`1_000`); `1e9`, `0x2`, `2.0` and `` are refused.
 * (Python also takes digits of other scripts, such as Arabic-Indic; this does not.)
 */
export function parsePythonInt(raw: string): bigint | undefined {
  const match = /^\s*([+-]?)([0-9]+(?:_[0-9]+)*)\s*$/.exec(raw);
  return match ? BigInt(match[1] + match[2].replace(/_/g, '')) : undefined;
}

/**
 * DISAGG_BATCH_SIZE as the Python framework reads it (conftest.py's batch_manager fixture:
 * `int(os.getenv("DISAGG_BATCH_SIZE"))` when set and not empty, a ValueError warns and means 5;
 * BatchManager takes 0 or less as unlimited). A size beyond any count of tests is all at once too.
 */
export function parseBatchSize(raw: string | undefined): { value: number; warning?: string } {
  if (raw === undefined || raw === '') return { value: DEFAULT_BATCH_SIZE };
  const value = parsePythonInt(raw);
  if (value === undefined) {
    return {
      value: DEFAULT_BATCH_SIZE,
      warning: `DISAGG_BATCH_SIZE=${shown(raw)} is not a whole number as Python's int() reads it (jobs per batch, 0 = all at once); using ${DEFAULT_BATCH_SIZE}, as the Python framework does`,
    };
  }
  if (value <= 0n) return { value: 0 };
  return { value: value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value) };
}

/** Reads one variable, recording a problem line instead of throwing, so every bad variable is named at once. */
class EnvReader {
  readonly problems: string[] = [];
  constructor(readonly env: NodeJS.ProcessEnv) {}

  positiveNumber(name: string, fallback: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (Number.isFinite(value) && value > 0 && value <= MAX_TIMER_SECONDS) return value;
    const bound = value > MAX_TIMER_SECONDS ? `, at most ${MAX_TIMER_SECONDS}, ${TIMER_REASON}` : '';
    this.problems.push(`${name}=${shown(raw)}: expected a number of seconds > 0${bound} (default ${fallback})`);
    return fallback;
  }

  /** A yes/no variable: 1/true/yes/on or 0/false/no/off (empty or unset: no). */
  flag(name: string): boolean {
    const raw = this.env[name]?.trim() ?? '';
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off|)$/i.test(raw)) return false;
    this.problems.push(`${name}=${shown(raw)}: expected 1 or 0 (also true/false, yes/no, on/off)`);
    return false;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], what: string): T | undefined {
    const raw = this.env[name]?.trim();
    if (!raw) return undefined;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name}=${shown(raw)}: expected ${allowed.join(' or ')} (${what})`);
    return undefined;
  }

  folder(name: string, fallback: string, what: string): string {
    const raw = this.env[name];
    if (!raw) return fallback;
    const resolved = path.resolve(raw);
    let kind: string | undefined;
    try {
      kind = statSync(resolved).isDirectory() ? undefined : 'is not a folder';
    } catch (err) {
      kind = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(err as NodeJS.ErrnoException).code})`;
    }
    if (kind) this.problems.push(`${name}=${shown(raw)}: ${kind}; expected ${what}`);
    return resolved;
  }
}

/** DISAGG_HISTORY, DISAGG_RUN_KIND, DISAGG_REGRESSION, DISAGG_REGRESSION_THRESHOLD, DISAGG_RUN_LABEL. */
function readHistorySettings(read: EnvReader, outputPath: string): HistorySettings {
  const env = read.env;
  const raw = env[SETTING_VARIABLES.history]?.trim() ?? '';
  let target: HistoryTarget;
  if (raw === '') target = { kind: 'duckdb', file: path.join(outputPath, HISTORY_FILE) };
  else if (/^(off|none|0|false|no)$/i.test(raw)) target = { kind: 'off' };
  else if (/^postgres(ql)?:\/\//i.test(raw)) target = { kind: 'postgres', url: raw };
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    read.problems.push(`DISAGG_HISTORY=${shown(raw)}: expected off, a postgres://user@host:port/database URL or a file path (DuckDB)`);
    target = { kind: 'off' };
  } else target = { kind: 'duckdb', file: path.resolve(raw) };
  const runKind = read.oneOf(SETTING_VARIABLES.runKind, RUN_KINDS, 'only post-merge runs feed later baselines') ?? 'local';
  // Upstream's process_and_upload_test_results: fail_on_regression=None means fail for pre-merge only.
  const regression = read.oneOf(SETTING_VARIABLES.regression, REGRESSION_MODES, 'what a regression against the history does') ?? (runKind === 'pre-merge' ? 'fail' : 'warn');
  let thresholdPercent: number | undefined;
  const rawThreshold = env.DISAGG_REGRESSION_THRESHOLD?.trim();
  if (rawThreshold) {
    thresholdPercent = Number(rawThreshold.replace(/%$/, ''));
    if (!Number.isFinite(thresholdPercent) || thresholdPercent <= 0) {
      read.problems.push(`DISAGG_REGRESSION_THRESHOLD=${shown(rawThreshold)}: expected a percentage > 0 (default 5 post-merge, 10 pre-merge)`);
      thresholdPercent = undefined;
    }
  }
  return { target, runKind, regression, thresholdPercent, runLabel: env[SETTING_VARIABLES.runLabel]?.trim() || undefined, gate: readGateSettings(read) };
}

/** A share strictly between 0 and 0.5 (DISAGG_GATE_ALPHA). */
function fraction(read: EnvReader, name: string, fallback: number): number {
  const raw = read.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (value > 0 && value < 0.5) return value;
  read.problems.push(`${name}=${shown(raw)}: expected a share of runs between 0 and 0.5, e.g. 0.05 (default ${fallback})`);
  return fallback;
}

/** DISAGG_GATE_RULE, DISAGG_GATE_ALPHA, DISAGG_GATE_MIN_RUNS, DISAGG_GATE_METRICS, DISAGG_GATE_MIN_DAYS, DISAGG_GATE_NOISE_K, DISAGG_BRANCH, DISAGG_BASELINE_BRANCH, DISAGG_HISTORY_LOCK_WAIT_SEC. */
function readGateSettings(read: EnvReader): GateSettings {
  const env = read.env;
  const metrics = (env.DISAGG_GATE_METRICS ?? '').split(',').map((m) => m.trim()).filter(Boolean);
  const bad = metrics.filter((m) => !/^-?[A-Za-z0-9_.:/-]+$/.test(m));
  if (bad.length) read.problems.push(`DISAGG_GATE_METRICS=${shown(env.DISAGG_GATE_METRICS!)}: expected a comma-separated list of headline, all, metric names and -NAME (opted out)`);
  const count = (name: string, fallback: number, min: number, what: string) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (Number.isFinite(value) && value >= min) return value;
    read.problems.push(`${name}=${shown(raw)}: expected ${what} (default ${fallback})`);
    return fallback;
  };
  return {
    metrics: metrics.length && !bad.length ? metrics : DEFAULT_GATE.metrics,
    rule: read.oneOf('DISAGG_GATE_RULE', GATE_RULES, 'the regression gate\'s rule') ?? DEFAULT_GATE.rule,
    alpha: fraction(read, 'DISAGG_GATE_ALPHA', DEFAULT_GATE.alpha),
    minRuns: Math.floor(count('DISAGG_GATE_MIN_RUNS', DEFAULT_GATE.minRuns, 3, 'a whole number of runs >= 3')),
    minDays: Math.floor(count('DISAGG_GATE_MIN_DAYS', DEFAULT_GATE.minDays, 1, 'a whole number of days >= 1')),
    noiseK: count('DISAGG_GATE_NOISE_K', DEFAULT_GATE.noiseK, 0, 'a number >= 0 (0: the threshold alone, as upstream)'),
    branch: env.DISAGG_BRANCH?.trim() || undefined,
    baselineBranch: env.DISAGG_BASELINE_BRANCH?.trim() || DEFAULT_GATE.baselineBranch,
    lockWaitSec: count('DISAGG_HISTORY_LOCK_WAIT_SEC', DEFAULT_GATE.lockWaitSec, 0, 'seconds >= 0'),
  };
}

/** Every variable of the run, checked; throws one SettingsError naming every variable that is wrong. */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const read = new EnvReader(env);
  const batch = parseBatchSize(env[SETTING_VARIABLES.batchSize]);
  const settings: Settings = {
    workDir: read.folder(SETTING_VARIABLES.workDir, packageRoot, 'the folder that holds test_configs/ and testlist/'),
    outputPath: path.resolve(env[SETTING_VARIABLES.outputPath] || path.join(packageRoot, 'results')),
    batchSize: batch.value,
    batchSizeWarning: batch.warning,
    debugMode: read.flag(SETTING_VARIABLES.debugMode),
    debugJobId: env.DEBUG_JOB_ID || undefined,
    resume: read.flag(SETTING_VARIABLES.resume),
    failUnfit: read.flag('DISAGG_FAIL_UNFIT'),
    // Checked against the scheduler registry by the run's environment check (suite/env-check.ts).
    scheduler: env[SETTING_VARIABLES.scheduler]?.trim() || undefined,
    testList: env[SETTING_VARIABLES.testList] || undefined,
    queueAllowanceSec: read.positiveNumber('DISAGG_QUEUE_ALLOWANCE_SEC', 3600),
    pollMaxSec: read.positiveNumber('DISAGG_POLL_MAX_SEC', 10),
    csvExtraRows: read.flag('DISAGG_CSV_EXTRA_ROWS'),
    printMetrics: read.flag('DISAGG_PRINT_METRICS'),
    history: { target: { kind: 'off' }, runKind: 'local', regression: 'warn', gate: DEFAULT_GATE },
  };
  read.oneOf('DISAGG_PROGRESS', PROGRESS_MODES, 'how the run shows its progress');
  settings.history = readHistorySettings(read, settings.outputPath);
  if (env.OUTPUT_PATH !== undefined && env.OUTPUT_PATH.trim() === '' && env.OUTPUT_PATH !== '') {
    read.problems.push(`OUTPUT_PATH=${shown(env.OUTPUT_PATH)}: expected a folder for results, logs and the job ledger`);
  }
  for (const [wrong, right] of Object.entries(MISSPELLED_VARIABLES)) {
    if (env[wrong] && !env[right]) read.problems.push(`${wrong}=${shown(env[wrong])}: not a variable disagg-bench reads; expected ${right}=${shown(env[wrong])}`);
  }
  if (read.problems.length > 0) throw new SettingsError(read.problems);
  return settings;
}
