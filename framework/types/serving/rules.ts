// Semantic rules of a disagg/wideep config, beyond its schema: the reference's four (MTP tokens,
// streaming, sequence lengths, concurrency bounds) and what the job builder relies on (servers
// that fit their nodes, distinct ports, parseable env strings, known placeholders, a valid metrics
// override, accuracy datasets that a task produces). Run on schema-valid configs only.
import type { KeyPath, RuleViolation } from '../../contract/test-type.ts';
import { checkRegexSpec } from '../../metrics/extractors/regex.ts';
import { parseReferences } from '../../metrics/references.ts';
import { isPlaceholder } from '../../../runners/common/placeholder.ts';
import { configPorts, packingProblem } from './job/allocation.ts';
import { findLauncher, launcherNames } from '../../scheduler/launch/launchers.ts';
import { templatePlaceholders } from './job/command-template.ts';
import { clientPresets, commandKinds, commandPlaceholders, warmupPresets } from './job/commands.ts';
import {
  accuracyTasks, launchesContextServers, TASK_NAME, mtpLayers, parseConcurrencyList, servingConfig, worldSize,
  type ServingConfig, type WorkerConfig,
} from './serving-config.ts';
import { parseEnvAssignments, splitShellWords } from '../../../runners/common/shell.ts';
import { clientRequirements } from './client-rules.ts';
import { llamacppRules } from './llamacpp-rules.ts';

/** Where the config lives: its category decides which upstream harness it mirrors. */
interface RuleContext {
  category?: string;
}

type Rule = (config: ServingConfig, context: RuleContext) => RuleViolation[];

/**
 * perf-sanity configs are run upstream by test_perf_sanity.py, which does not apply
 * utils/config_validator.py's key reads; every other category goes through that validator.
 */
const PERF_SANITY = 'perf-sanity';

const violation = (path: KeyPath, message: string): RuleViolation => ({ path, message });

/** Rules 1-4 are upstream's own (utils/config_validator.py): its test fails on the same config. */
export const UPSTREAM_REFUSES_TOO = " (upstream's config_validator refuses it too)";
const upstreamRule = (path: KeyPath, message: string) => violation(path, message + UPSTREAM_REFUSES_TOO);

/** 1. With MTP (T > 0), gen.max_num_tokens >= gen.max_batch_size * (T + 1). */
const mtpTokens: Rule = (config) => {
  const gen = config.worker_config.gen;
  const t = mtpLayers(gen);
  if (t <= 0 || gen.max_num_tokens === undefined || gen.max_batch_size === undefined) return [];
  const needed = gen.max_batch_size * (t + 1);
  return gen.max_num_tokens >= needed
    ? []
    : [upstreamRule(['worker_config', 'gen', 'max_num_tokens'], `${gen.max_num_tokens} is below max_batch_size * (mtp + 1) = ${needed}`)];
};

/** 2. The client measures streamed tokens: streaming must be on. */
const streaming: Rule = (config) =>
  config.benchmark.streaming === true ? [] : [upstreamRule(['benchmark', 'streaming'], 'must be true (TTFT, TPOT and ITL are measured on streamed tokens)')];

/**
 * 3. ctx.max_seq_len > input_length; gen.max_seq_len > input_length + output_length. Without
 * max_seq_len upstream's validator fails with a KeyError (outside perf-sanity, where the engine's
 * default applies and nothing is compared).
 */
const sequenceLengths: Rule = (config, context) => {
  const { input_length: isl, output_length: osl } = config.benchmark;
  const out: RuleViolation[] = [];
  const ctx = config.worker_config.ctx;
  if (context.category !== PERF_SANITY) {
    const roles: Array<['ctx' | 'gen', WorkerConfig | undefined]> = [['gen', config.worker_config.gen], ['ctx', ctx]];
    for (const [role, worker] of roles) {
      if (worker && worker.max_seq_len === undefined) {
        out.push(violation(['worker_config', role, 'max_seq_len'],
          `is required but missing: upstream's utils/config_validator.py reads it and fails with a KeyError without it ` +
          `(only perf-sanity configs, which upstream runs without that validator, may leave it to the engine's default)`));
      }
    }
  }
  if (ctx?.max_seq_len !== undefined && launchesContextServers(config.benchmark.mode) && !(ctx.max_seq_len > isl)) {
    out.push(upstreamRule(['worker_config', 'ctx', 'max_seq_len'], `${ctx.max_seq_len} must be greater than input_length = ${isl}`));
  }
  const gen = config.worker_config.gen;
  if (gen.max_seq_len !== undefined && !(gen.max_seq_len > isl + osl)) {
    out.push(upstreamRule(['worker_config', 'gen', 'max_seq_len'], `${gen.max_seq_len} must be greater than input_length + output_length = ${isl + osl}`));
  }
  return out;
};

/** 4. Each (per generation server) concurrency fits the generation server's batch. */
const concurrencyBounds: Rule = (config) => {
  const path: KeyPath = ['benchmark', 'concurrency_list'];
  let list: number[];
  try {
    list = parseConcurrencyList(config.benchmark.concurrency_list);
  } catch (error) {
    return [violation(path, (error as Error).message)];
  }
  const gen = config.worker_config.gen;
  if (gen.max_batch_size === undefined) return [];
  const dp = gen.enable_attention_dp === true;
  const limit = dp ? gen.max_batch_size * (gen.tensor_parallel_size ?? 1) : gen.max_batch_size;
  const what = dp ? `gen max_batch_size * tensor_parallel_size = ${limit} (attention DP)` : `gen max_batch_size = ${limit}`;
  const asList = Array.isArray(config.benchmark.concurrency_list);
  return list.flatMap((c, i) => (c > limit ? [upstreamRule(asList ? [...path, i] : path, `concurrency ${c} exceeds ${what}`)] : []));
};

/** Context servers exist unless the mode runs without them; every server fits its nodes. */
const serverShapes: Rule = (config) => {
  const out: RuleViolation[] = [];
  const gpus = config.hardware.gpus_per_node;
  const roles: Array<['ctx' | 'gen', WorkerConfig | undefined]> = [['gen', config.worker_config.gen]];
  if (launchesContextServers(config.benchmark.mode)) {
    if (config.hardware.num_ctx_servers < 1) {
      out.push(violation(['hardware', 'num_ctx_servers'], `must be at least 1 in mode ${config.benchmark.mode} (only gen_only_no_context runs without context servers)`));
    }
    if (!config.worker_config.ctx) {
      out.push(violation(['worker_config', 'ctx'], `is required in mode ${config.benchmark.mode} (only gen_only_no_context runs without context servers)`));
    }
    roles.push(['ctx', config.worker_config.ctx]);
  }
  for (const [role, worker] of roles) {
    if (!worker) continue;
    const problem = packingProblem(worldSize(worker), gpus);
    if (problem) out.push(violation(['worker_config', role, 'tensor_parallel_size'], `${problem} (gpus_per_node); world = tp * pp * cp = ${worldSize(worker)}`));
  }
  return out;
};

/** Worker ports (base_port + i) stay valid and clear of the router's port. */
const ports: Rule = (config) => {
  const { base, router } = configPorts(config);
  const servers = config.hardware.num_gen_servers + (launchesContextServers(config.benchmark.mode) ? config.hardware.num_ctx_servers : 0);
  const last = base + servers - 1;
  if (last > 65535) return [violation(['launch', 'base_port'], `${base} + ${servers} servers runs past port 65535`)];
  if (router >= base && router <= last) {
    return [violation(['launch', 'router_port'], `${router} is one of the worker ports ${base}-${last}: move the router or launch.base_port`)];
  }
  return [];
};

/** `A=1 B="x y"` strings and extra sbatch arguments must split cleanly. */
const shellStrings: Rule = (config) => {
  const out: RuleViolation[] = [];
  const env = config.environment;
  const check = (path: KeyPath, value: unknown, parse: (s: string) => unknown) => {
    if (typeof value !== 'string' || isPlaceholder(value)) return;
    try {
      parse(value);
    } catch (error) {
      out.push(violation(path, (error as Error).message));
    }
  };
  for (const key of ['worker_env_var', 'server_env_var', 'ctx_worker_env_var', 'gen_worker_env_var'] as const) {
    check(['environment', key], env[key], parseEnvAssignments);
  }
  check(['benchmark', 'env_var'], config.benchmark.env_var, parseEnvAssignments);
  check(['accuracy', 'env_var'], config.accuracy?.env_var, parseEnvAssignments);
  check(['slurm', 'extra_args'], config.slurm.extra_args, splitShellWords);
  check(['launch', 'numa_command'], config.launch?.numa_command, splitShellWords);
  for (const mapping of [['benchmark', config.benchmark.env_var], ['accuracy', config.accuracy?.env_var]] as const) {
    const [section, value] = mapping;
    if (!value || typeof value !== 'object') continue;
    for (const name of Object.keys(value)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) out.push(violation([section, 'env_var', name], 'is not a valid environment variable name'));
    }
  }
  return out;
};

/** Command templates split cleanly and use only the placeholders their command has. */
const commandTemplates: Rule = (config) =>
  commandKinds.flatMap((kind) => {
    const template = config.commands?.[kind];
    if (template === undefined) return [];
    if (kind === 'client' && typeof template === 'string' && Object.hasOwn(clientPresets, template.trim())) return [];
    if (kind === 'warmup' && typeof template === 'string' && Object.hasOwn(warmupPresets, template.trim())) return [];
    let used: string[];
    try {
      used = templatePlaceholders(template);
    } catch (error) {
      return [violation(['commands', kind], (error as Error).message)];
    }
    const known = commandPlaceholders[kind];
    return used
      .filter((name) => !known.includes(name))
      .map((name) => violation(['commands', kind], `unknown placeholder {${name}}; ${kind} knows ${known.map((k) => `{${k}}`).join(' ')}`));
  });

/** benchmark.metrics (or metadata.metrics): one place, a pattern that compiles, one group per name. */
const metricsOverrideRule: Rule = (config) => {
  const out: RuleViolation[] = [];
  if (config.benchmark.metrics && config.metadata.metrics) {
    out.push(violation(['metadata', 'metrics'], 'the metrics override is also set in benchmark.metrics: keep only that one'));
  }
  for (const [section, override] of [['benchmark', config.benchmark.metrics], ['metadata', config.metadata.metrics]] as const) {
    if (!override) continue;
    const reason = checkRegexSpec(override.extractor_pattern, override.metric_names);
    if (reason) out.push(violation([section, 'metrics', 'extractor_pattern'], reason));
  }
  return out;
};

/** benchmark.references parse (metrics/references.ts gives the form). */
const referencesRule: Rule = (config) =>
  parseReferences(config.benchmark.references).errors.map((message) => violation(['benchmark', 'references'], message));

/** Accuracy: something to judge, and every judged dataset produced by a task that runs. */
const accuracyDatasets: Rule = (config) => {
  const out: RuleViolation[] = [];
  const datasets = config.metadata.accuracy?.datasets ?? [];
  const seen = new Set<string>();
  datasets.forEach((d, i) => {
    const key = `${d.dataset_name.toLowerCase()}|${d.filter_type ?? 'flexible-extract'}`;
    if (seen.has(key)) {
      out.push(violation(['metadata', 'accuracy', 'datasets', i], `${d.dataset_name} (${d.filter_type ?? 'flexible-extract'}) is listed twice`));
    }
    seen.add(key);
  });
  if (!config.accuracy?.enable_accuracy_test) return out;
  const tasks = accuracyTasks(config);
  if (tasks.length === 0) out.push(violation(['accuracy', 'tasks'], 'enable_accuracy_test is true but no task is given'));
  if (datasets.length === 0) {
    out.push(violation(['metadata', 'accuracy', 'datasets'], 'enable_accuracy_test is true but no dataset has an expected value to judge against'));
  }
  for (const task of tasks) {
    if (!TASK_NAME.test(task.name)) out.push(violation(['accuracy', 'tasks'], `task name ${JSON.stringify(task.name)} must be letters, digits, _ . - (it names a log file)`));
  }
  const names = new Set(tasks.map((t) => t.name.toLowerCase()));
  datasets.forEach((d, i) => {
    if (tasks.length > 0 && !names.has(d.dataset_name.toLowerCase())) {
      out.push(violation(['metadata', 'accuracy', 'datasets', i, 'dataset_name'], `no accuracy task runs ${d.dataset_name} (tasks: ${tasks.map((t) => t.name).join(', ')})`));
    }
  });
  return out;
};

/**
 * Keys of the reference's job that this job does not act on, refused when they ask for something
 * (silently benchmarking another build or another client would give misleading numbers).
 */
const unsupportedRequests: Rule = (config) => {
  const out: RuleViolation[] = [];
  const env = config.environment;
  const install = 'installing the engine in the job is not supported: use a container image (environment.container_image) that has it';
  if (typeof env.trtllm_repo === 'string' && env.trtllm_repo.trim() !== '') out.push(violation(['environment', 'trtllm_repo'], install));
  if (typeof env.trtllm_wheel_path === 'string' && env.trtllm_wheel_path.trim() !== '') out.push(violation(['environment', 'trtllm_wheel_path'], install));
  if (env.build_wheel === true) out.push(violation(['environment', 'build_wheel'], install));
  return out;
};

/**
 * launch.launcher: `direct` or a launcher registered when the config is validated (a site's own,
 * registered from its code, included: the schema cannot list those).
 */
const launcherRule: Rule = (config) => {
  const name = config.launch?.launcher;
  if (name === undefined || name === 'direct' || findLauncher(name)) return [];
  return [violation(['launch', 'launcher'], `no launcher is registered as ${JSON.stringify(name)}; expected direct or one of ${launcherNames().join(', ')}`)];
};

const rules: Rule[] = [
  mtpTokens, streaming, sequenceLengths, concurrencyBounds, serverShapes, ports, launcherRule, shellStrings, commandTemplates,
  metricsOverrideRule, referencesRule, accuracyDatasets, unsupportedRequests, clientRequirements, llamacppRules,
];

/** Every rule's findings at once. */
export function servingRules(config: Record<string, unknown>, source?: { file: string; category?: string }): RuleViolation[] {
  const typed = servingConfig(config);
  const context: RuleContext = { category: source?.category };
  return rules.flatMap((rule) => rule(typed, context));
}
