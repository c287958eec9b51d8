// A benchmark kind of the `nixl` test type: one module per kind (ct-perftest, sequential-ct-perftest,
// matgen, sweep, ep, kvpipe, and the adapters for the real NIXL tools), registered in kinds.ts.
// The `nixl` type (../nixl.ts) owns what every kind shares: the config's common sections, the
// job script (ranks under srun or the local launcher), resources and the generic verdict.
//
// A nixl config:
//   metadata:   { description?, supported_gpus?: [H200, ...] }   # no supported_gpus: needs no GPU
//   benchmark:  { kind: <kind name>, ranks: 4, nodes: 1, backend: shm|ucx|cuda|nccl, timeout_s?: 300,
//                 cuda_copy?: auto|copy-engine|kernel (backend cuda: see runners/xfer/device-copy/copy-path.ts),
//                 references?: {...} }                          # references: see metrics/references.ts
//   slurm:      { partition?, account?, job_time?: "00:10:00", extra_args?: "--gres=gpu:2" }
//   <section>:  the kind's own options, e.g. `ct_perftest:` with the seed's YAML keys
import type { JsonSchema, KeyPath, RuleViolation } from '../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../metrics/metric.ts';

export interface NixlKindContext {
  /** The resolved config. */
  config: Record<string, unknown>;
  /** The config file's folder: relative paths in a config (matrix files...) are relative to it. */
  configDir: string;
  /** The test's log folder. */
  logDir: string;
  /** The package root: `node <packageRoot>/bin/disagg-bench ...` runs the project's commands. */
  packageRoot: string;
}

/** What every rank of the job runs. */
export interface RankCommand {
  /** argv after `disagg-bench` (e.g. ['ct-perftest', cfg, '--verify-buffers']) or a full command. */
  argv: string[];
  /** true: argv is a whole command line (an external tool), not a disagg-bench subcommand. */
  external?: boolean;
  /** Log file name in the log folder that the ranks' output goes to. */
  logFile: string;
  /** Files the kind writes into the log folder before the job (configs, matrices), name -> text. */
  artefacts?: Record<string, string>;
  /** Extra environment of the ranks. */
  env?: Record<string, string>;
  /** Lines of bash run before the ranks start (e.g. start a private etcd); quoted by the kind. */
  prelude?: string[];
  /** Lines of bash run after the ranks, also on failure (cleanup). */
  cleanup?: string[];
}

export interface NixlKind {
  /** Value of benchmark.kind and the name of the kind's CLI command. */
  name: string;
  /** Config section holding the kind's options (e.g. 'ct_perftest'); undefined = none. */
  section?: string;
  /** JSON Schema of that section. */
  sectionSchema?: JsonSchema;
  /** Backends the kind can run on (others are validation errors). */
  backends: readonly string[];
  /** Semantic rules (paths are full key paths, e.g. ['ct_perftest', 'traffic_pattern', 'matrix_file']). */
  rules(config: Record<string, unknown>, configDir: string): RuleViolation[];
  /** Default metrics (a config's benchmark.metrics override replaces them in nixl.ts). */
  metrics(config: Record<string, unknown>): MetricSpec[];
  /** The command every rank runs. */
  rankCommand(ctx: NixlKindContext): RankCommand;
  /** The figures this kind's users watch, picked from its metrics (TestType.headline); default none. */
  headline?(config: Record<string, unknown>, metrics: readonly Metric[]): Metric[];
  /** Kind-specific verdict on the extracted metrics (beyond "the log had them"); default none. */
  verdict?(config: Record<string, unknown>, metrics: import('../../metrics/metric.ts').Metric[]): string[];
  /** The log the engine's ranks write (its GPU ranks record their devices there); undefined for the real tools. */
  rankLog?: string;
  /** The real NIXL tool the kind drives, for `needs` checks (e.g. 'nixlbench'); undefined = our engine. */
  externalTool?: string;
}

export type { KeyPath };
