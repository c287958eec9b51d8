// What one test type is: a schema, semantic rules, default metrics, a job builder and a verdict.
// The core (config, select, jobs, metrics, results, suite) knows test types only through this.
import type { JobResources } from '../scheduler/scheduler.ts';
import type { Metric, MetricSpec } from '../metrics/metric.ts';

export type JsonSchema = Record<string, unknown>;
export type KeyPath = (string | number)[];

/** A semantic rule's finding; the core turns the path into file:line:col. */
export interface RuleViolation {
  path: KeyPath;
  message: string;
}

/** A config value the environment may fill (see config/resolve.ts for the precedence). */
export interface EnvOverride {
  path: KeyPath;
  /** Variable whose value is used. */
  env: string;
  /** Turns the variable's value into the config value, e.g. join with metadata.model_dir_name. */
  compose?: (envValue: string, config: Record<string, unknown>) => string | undefined;
}

/** Everything a job builder gets. */
export interface JobBuildContext {
  testId: string;
  category: string;
  /** The resolved config (env overrides applied). */
  config: Record<string, unknown>;
  /** Absolute folder of this test's logs: OUTPUT_PATH/slurm_logs/<test id>/. */
  logDir: string;
  /** WORK_DIR: the folder holding test_configs/. */
  workDir: string;
  /** Package root (where runners/ and bin/ live), for commands that call back into the project. */
  packageRoot: string;
  /** The run's GPU type as upstream's GPU_RESOURCE_CONFIG is keyed (GB200, GB200_LYRIS, H100...). */
  gpuType: string | undefined;
  /**
   * The launcher the job starts its steps with (framework/scheduler/launch/): the run's scheduler's
   * default, which a config may override. Absent: srun.
   */
  launcher?: string;
}

/** What a job builder produces: a job script on disk and what it asks the scheduler for. */
export interface BuiltJob {
  scriptPath: string;
  resources: JobResources;
  env?: Record<string, string>;
  /** One-line notes the run prints as it submits (a config value replaced, and why). */
  notes?: string[];
}

/** Everything a verdict gets after the job ended. */
export interface VerdictContext {
  testId: string;
  category: string;
  config: Record<string, unknown>;
  logDir: string;
  metrics: Metric[];
  /** Problems the extractors found (truncated logs, missing blocks...). */
  problems: string[];
}

export interface Verdict {
  passed: boolean;
  /** Every reason the test failed, all at once. */
  failures: string[];
}

export interface TestType {
  /** Folder name under test_configs/ and the Vitest project name. */
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of a config file. */
  schema: JsonSchema;
  /**
   * Semantic rules beyond the schema; run only on schema-valid configs. `source.file` is the
   * config's absolute path (relative paths inside a config are relative to its folder);
   * `source.category` its folder under test_configs/<type>/ (perf, accuracy, perf-sanity...).
   * A rule reads what it needs from these arguments, never from the run's settings.
   */
  rules(config: Record<string, unknown>, source: { file: string; category?: string }): RuleViolation[];
  /** Values the environment fills before submission. */
  envOverrides: EnvOverride[];
  /** GPU types the config can run on; undefined = the config needs no GPU. */
  supportedGpus(config: Record<string, unknown>): string[] | undefined;
  /**
   * The GPU type assumed when the run finds none (no GPU_TYPE, no typed SLURM gres, no NVML):
   * upstream's GPU_TYPE default for the serving types. Undefined: configs that need a GPU are skipped.
   */
  assumedGpuType?: string;
  /** Metrics read from the job's logs (the config's override, if any, already applied). */
  metrics(config: Record<string, unknown>, category: string): MetricSpec[];
  /** Writes the job's artefacts into ctx.logDir and returns the script to submit. */
  buildJob(ctx: JobBuildContext): Promise<BuiltJob>;
  /** Decides pass/fail from the extracted metrics, beyond the generic checks. */
  verdict(ctx: VerdictContext): Verdict;
  /**
   * The config's performance references (see metrics/references.ts for the form), if any; the
   * core fails a test whose metrics leave their bounds.
   */
  references?(config: Record<string, unknown>): Record<string, unknown> | undefined;
  /** The config's `benchmark.regression` thresholds (metrics/regression-thresholds.ts), if any. */
  regression?(config: Record<string, unknown>): unknown;
  /**
   * What, beyond the test id and GPU type, makes two runs of this config "the same test" in the
   * performance history (the transfer backend...): upstream's match keys.
   */
  identity?(config: Record<string, unknown>): Record<string, string | number>;
  /**
   * The figures users of this type watch (the run digest's column, the report's first cards and,
   * by default, the only metrics the history gate judges), picked from the test's extracted
   * metrics, most important first. Undefined or empty: the test has no headline figure. `config`
   * is `{}` where the config is not at hand (a record of an older version whose config is gone):
   * the type's figures without it, never an error.
   */
  headline?(metrics: readonly Metric[], config: Record<string, unknown>, category: string): Metric[];
  /**
   * Why this (valid) config cannot run on this machine although its GPU can (a transport library
   * it needs cannot be loaded: the reason and the package that provides it), or undefined. The
   * plan skips such a config, as it skips a config for another GPU.
   */
  unavailableHere?(config: Record<string, unknown>): string | undefined;
  /**
   * Why the nodes the run's jobs get cannot hold this (valid) config (more GPUs or tasks per node
   * than a node has), or undefined (also when their size is unknown). The plan skips such a
   * config, saying why, unless DISAGG_FAIL_UNFIT=1 asks for it to run and fail.
   */
  cannotHold?(config: Record<string, unknown>, node: NodeSize): string | undefined;
  /** How the test's CSV rows are named and which metrics they hold (results/csv.ts). */
  csvInfo?(config: Record<string, unknown>, category: string, testId: string): CsvInfo;
}

/** What one node of the run's jobs holds, as far as it is known, and which node that is (for messages). */
export interface NodeSize {
  cpus?: number;
  gpus?: number;
  /** `node vm` (this machine), `the nodes of SLURM partition debug`. */
  where: string;
}

export interface CsvInfo {
  /** Model and precision for the command column; its first word (default 'disagg_benchmark'). */
  model?: string;
  precision?: string;
  command?: string;
  /** The rows' name before their labels; default the test id. */
  rowName?: string;
  /**
   * The metrics the CSV holds, by name, in the order written per label set; the others only with
   * DISAGG_CSV_EXTRA_ROWS=1. Undefined: every metric.
   */
  metricNames?: string[];
}
