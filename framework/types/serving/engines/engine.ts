// A serving engine as data: everything the serving job needs to know about the engine that serves
// (its binaries and their flags, the router's health and completions endpoints, ports, its worker
// roles' files and logs, its environment switches, its profiler, the benchmark client it ships).
// One table per engine (trtllm.ts); engines.ts lists them and `launch.engine` picks one.
// The job plan (../job/job-plan.ts) reads nothing engine-specific from anywhere else.
import type { EnvAssignment } from '../../../../runners/common/shell.ts';
import type { Allocation, Role } from '../job/allocation.ts';
import type { ServingConfig } from '../serving-config.ts';
import type { MetricSpec } from '../../../metrics/metric.ts';

export interface ServingEngine {
  /** `launch.engine: <name>`. */
  name: string;
  /** One line for docs and error messages. */
  description: string;
  /** Runs without a GPU: a config that lists no supported_gpus then needs none (else upstream's default list). */
  runsOnCpu?: boolean;
  /**
   * The commands the job runs when the config gives none (`commands.<kind>` or DISAGG_<KIND>_CMD
   * replace them), with the placeholders of ../job/commands.ts's commandPlaceholders.
   */
  commands: { worker: string; router: string; accuracy: string };
  /**
   * The benchmark client the engine ships, its command up to and with the model option: the
   * `benchmark_serving` client and the UCX warm-up add their options to it.
   */
  benchmarkClient: string;
  /** The warm-up preset its benchmark client takes (../job/commands.ts's warmupPresets; default benchmark_serving). */
  warmupPreset?: 'benchmark_serving' | 'serve-bench';
  /** Metrics its tests record beyond the test type's defaults (a serving log's names: SERVER_MEDIAN_ITL...). */
  extraMetrics?: string[];
  /** Logs beyond the benchmark log its jobs write figures into (perf tests), read as these specs say. */
  extraMetricSpecs?: MetricSpec[];
  /** Where on the router's URL it answers once every server is up (the job waits for a 2xx). */
  healthPath: string;
  /** The OpenAI completions endpoint on the router, which accuracy tasks call. */
  completionsPath: string;
  /** The first worker's port (the next ones count up) and the router's (launch.base_port / router_port). */
  ports: { base: number; router: number };
  /** How long the job waits for health, and how often it asks, when launch says nothing (seconds). */
  health: { timeoutS: number; intervalS: number };
  /** The process-management interface its worker ranks find each other through (launch.mpi overrides; null: none). */
  pmi: string;
  /** The files it reads and the logs its steps write, in the test's log folder. */
  files: {
    /** Each role's worker options (worker_config.<role>, written as YAML). */
    workerConfig: Record<Role, string>;
    /** The router's config (routerConfig). */
    routerConfig: string;
    serverLog: (role: Role, index: number) => string;
    routerLog: string;
  };
  /**
   * The router's config file: its host, port and the servers' URLs, hosts written as `<nodeN>`
   * (../job/node-placeholder.ts), which the job replaces with the node addresses as it runs.
   */
  routerConfig: (allocation: Allocation) => string;
  env: {
    /** Exported to every step, before the config's own variables (the benchmark mode's switches). */
    everyStep: (config: ServingConfig) => EnvAssignment[];
    /** The generation workers' only, after the config's own. */
    generationWorkers: (config: ServingConfig) => EnvAssignment[];
  };
  /** The profiler in front of a worker when profiling.nsys_on: its capture range per role, and its words. */
  profiler: {
    ranges: Record<Role, string>;
    wrap: (outputBase: string, range: string) => { words: string[]; env: EnvAssignment[] };
  };
}
