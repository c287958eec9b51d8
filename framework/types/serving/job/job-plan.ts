// From a resolved config to the job's steps: which command runs where, with which environment,
// writing which log. Pure (no file system), so the whole plan can be checked in tests.
import path from 'node:path';
import { allocate, type Allocation, type ServerAllocation } from './allocation.ts';
import { expandTemplate, templatePlaceholders, type TemplateValues } from './command-template.ts';
import {
  commandTemplate, DEFAULT_NUMA_COMMAND, DEFAULT_PROFILE_RANGES, genWorkerEnv, modeWorkerEnv, nsysProfile, type CommandKind,
} from './engine-defaults.ts';
import { jobFiles } from './job-files.ts';
import { JobSecrets } from './job-secrets.ts';
import type { BenchmarkPlan, JobScriptPlan, StepPlan } from './job-script.ts';
import {
  accuracyTasks, effectiveConcurrencies, type AccuracyTask, type ServingConfig,
} from '../serving-config.ts';
import { isPlaceholder } from '../../../../runners/common/placeholder.ts';
import {
  envFromMapping, JoinedWord, parseEnvAssignments, ShellVar, splitShellWords, type EnvAssignment, type Word,
} from '../../../../runners/common/shell.ts';
import { serverConfigTemplate } from './server-config.ts';
import { clientUsesDataset, warmupPlan } from './warmup.ts';
import { derivedContainerMounts, mountsLeftToFramework } from './container-mounts.ts';

export const DEFAULT_HEALTH_TIMEOUT_S = 1800;
export const DEFAULT_HEALTH_INTERVAL_S = 10;
export const DEFAULT_MPI = 'pmix';
export const DEFAULT_CONTAINER_NAME = 'disagg-bench';

export interface PlanInput {
  testId: string;
  config: ServingConfig;
  logDir: string;
  packageRoot: string;
  /** WORK_DIR (mounted into the container when the config leaves the mounts to the framework). */
  workDir?: string;
}

/** A value the job needs that is still a `<placeholder>`. */
export interface Unresolved {
  path: string;
  value: string;
}

export interface JobPlan {
  allocation: Allocation;
  script: JobScriptPlan;
  /** Environment of each step, by step name, as written to env_vars.json (secrets <redacted>). */
  env: Record<string, Record<string, string>>;
  /** Secret-named values the job's environment must carry (job.sh only expands them). */
  jobEnv: Record<string, string>;
  unresolved: Unresolved[];
}

export function planServingJob(input: PlanInput): JobPlan {
  const { config, logDir } = input;
  const allocation = allocate(config);
  const unresolved: Unresolved[] = [];
  /** Returns a config string the job uses, noting it when it is still a placeholder. */
  const use = (value: string | undefined, keyPath: string): string | undefined => {
    if (value !== undefined && isPlaceholder(value)) unresolved.push({ path: keyPath, value });
    return value;
  };
  const env: Record<string, Record<string, string>> = {};
  const secrets = new JobSecrets();
  const file = (name: string) => path.join(logDir, name);

  const launch = config.launch ?? {};
  const useSrun = (launch.launcher ?? 'srun') === 'srun';
  const mpi = launch.mpi === undefined ? DEFAULT_MPI : launch.mpi;
  const image = config.environment.container_image?.trim() ? use(config.environment.container_image, 'environment.container_image') : undefined;
  const givenMount = config.environment.container_mount;
  const mount = !image
    ? undefined
    : mountsLeftToFramework(givenMount)
      ? derivedContainerMounts({ config, workDir: input.workDir ?? input.packageRoot, packageRoot: input.packageRoot, logDir })
      : givenMount!.trim();
  const containerFlags: string[] = image
    ? [`--container-image=${image}`, `--container-name=${launch.container_name ?? DEFAULT_CONTAINER_NAME}`, ...(mount ? [`--container-mounts=${mount}`] : [])]
    : [];
  const srunOn = (nodelist: ShellVar, nodes: number, ntasks: number, perNode: number, worker: boolean): Word[] =>
    useSrun
      ? [
          'srun', '--overlap', '--nodelist', nodelist, '--nodes', nodes, '--ntasks', ntasks, '--ntasks-per-node', perNode,
          ...(worker && mpi && mpi !== 'none' ? [`--mpi=${mpi}`] : []),
          ...(worker ? ['--kill-on-bad-exit=1'] : []),
          ...containerFlags,
        ]
      : [];
  const onRouterNode = srunOn(new ShellVar('ROUTER_NODE'), 1, 1, 1, false);
  const withEnv = (stepName: string, assignments: EnvAssignment[], words: Word[]): Word[] => {
    env[stepName] = Object.fromEntries(assignments.map((a) => [a.name, secrets.shown(a)]));
    return assignments.length > 0 ? ['env', ...assignments.map((a) => secrets.word(a)), ...words] : words;
  };
  const envString = (value: string | undefined, keyPath: string) => envValue(value, keyPath, use);

  const modelPath = config.environment.model_path;
  const common: TemplateValues = {
    model: modelPath,
    model_name: config.metadata.model_name,
    log_dir: logDir,
    package_root: input.packageRoot,
    input_length: config.benchmark.input_length,
    output_length: config.benchmark.output_length,
  };
  /** Where a placeholder's value comes from, to name it when it is unresolved. */
  const sources: Record<string, string> = { model: 'environment.model_path', dataset_file: 'benchmark.dataset_file' };
  const command = (kind: CommandKind, values: TemplateValues, what: string): Word[] => {
    const template = commandTemplate(config, kind);
    for (const name of templatePlaceholders(template)) {
      const value = values[name];
      if (typeof value === 'string' && sources[name]) use(value, sources[name]);
    }
    return expandTemplate(template, values, what);
  };

  // Workers.
  const workerEnv = envString(config.environment.worker_env_var, 'environment.worker_env_var');
  const roleEnv = {
    CTX: envString(config.environment.ctx_worker_env_var, 'environment.ctx_worker_env_var'),
    // The engine's generation-only switch comes last, as in upstream's build_worker_environment.
    GEN: [...envString(config.environment.gen_worker_env_var, 'environment.gen_worker_env_var'), ...genWorkerEnv(config)],
  };
  const numa = config.slurm.numa_bind ? splitShellWords(launch.numa_command ?? DEFAULT_NUMA_COMMAND) : [];
  const nodeVars: JobScriptPlan['nodeVars'] = [];
  const servers: StepPlan[] = allocation.servers.map((server: ServerAllocation) => {
    nodeVars.push(
      { name: `${server.name}_NODES`, nodes: server.nodes, of: 'NODES' },
      { name: `${server.name}_HOST`, nodes: [server.nodes[0]], of: 'HOSTS' },
    );
    const nsys = config.profiling?.nsys_on
      ? nsysProfile(
          file(`nsys_worker_${server.name}`),
          (server.role === 'CTX' ? config.profiling.ctx_profile_range : config.profiling.gen_profile_range) ?? DEFAULT_PROFILE_RANGES[server.role],
        )
      : { words: [], env: [] };
    const assignments = [
      ...workerEnv,
      ...roleEnv[server.role],
      { name: 'CUDA_VISIBLE_DEVICES', value: server.gpuIds.join(',') },
      ...nsys.env,
    ];
    const worker = command(
      'worker',
      {
        ...common,
        host: new ShellVar(`${server.name}_HOST`),
        port: server.port,
        config: file(server.role === 'CTX' ? jobFiles.ctxConfig : jobFiles.genConfig),
        role: server.role.toLowerCase(),
        index: server.index,
        server: server.name,
      },
      `commands.worker (${server.name})`,
    );
    const prefix = srunOn(new ShellVar(`${server.name}_NODES`), server.nodes.length, server.worldSize, server.ntasksPerNode, true);
    return {
      name: server.name,
      log: file(jobFiles.server(server.role, server.index)),
      words: [...prefix, ...withEnv(server.name, assignments, [...nsys.words, ...numa, ...worker])],
    };
  });

  // Router.
  const routerPort = allocation.router.port;
  const healthTimeoutS = launch.health_timeout_s ?? DEFAULT_HEALTH_TIMEOUT_S;
  const routerValues = { ...common, host: new ShellVar('ROUTER_HOST'), port: routerPort };
  const router: StepPlan = {
    name: 'ROUTER',
    log: file(jobFiles.router),
    words: [
      ...onRouterNode,
      ...withEnv('ROUTER', envString(config.environment.server_env_var, 'environment.server_env_var'),
        command('router', { ...routerValues, config: file(jobFiles.serverConfig), health_timeout: healthTimeoutS }, 'commands.router')),
    ],
  };

  // Benchmark client, once per concurrency, after upstream's warm-ups (warmup.ts).
  const clientEnv = envValue(config.benchmark.env_var, 'benchmark.env_var', use);
  const multiRound = config.benchmark.multi_round ?? 1;
  const runsBenchmark = config.benchmark.enable_benchmark !== false;
  const clientStep = (name: string, values: TemplateValues): StepPlan => ({
    name,
    log: file(jobFiles.bench),
    words: [...onRouterNode, ...withEnv(name, clientEnv, command('client', { ...routerValues, base_url: new ShellVar('ROUTER_URL'), ...values }, 'commands.client'))],
  });
  const clientValues = (concurrency: number, numPrompts: number, resultDir: string, datasetFile: string | undefined): TemplateValues => ({
    concurrency,
    num_prompts: numPrompts,
    multi_round: multiRound,
    dataset_file: datasetFile,
    result_dir: resultDir,
    benchmark_ratio: config.benchmark.benchmark_ratio,
    // run_benchmark_aiperf.sh's limit: 20 minutes per round.
    benchmark_duration: multiRound * 1200,
  });
  const warmups = warmupPlan(config, logDir, clientUsesDataset(config));
  const benchmarks: BenchmarkPlan[] = !runsBenchmark
    ? []
    : effectiveConcurrencies(config).map((concurrency) => {
        const numPrompts = concurrency * multiRound;
        const resultDir = file(`concurrency_${concurrency}`);
        const exact = warmups.exact(concurrency);
        const measuredDataset = exact?.split?.measurement ?? config.benchmark.dataset_file;
        return {
          concurrency,
          numPrompts,
          resultDir,
          step: clientStep(`client c=${concurrency}`, clientValues(concurrency, numPrompts, resultDir, measuredDataset)),
          exactWarmup: exact && {
            ...exact,
            step: clientStep(`exact warmup c=${concurrency}`, clientValues(concurrency, exact.prompts, exact.resultDir, exact.split?.warmup ?? config.benchmark.dataset_file)),
          },
        };
      });
  const ucxRequests = runsBenchmark ? warmups.ucxRequests : 0;
  const ucxWarmup: JobScriptPlan['ucxWarmup'] = ucxRequests > 0
    ? {
        requests: ucxRequests,
        step: {
          name: 'ucx warmup',
          log: file(jobFiles.bench),
          words: [...onRouterNode, ...withEnv('ucx warmup', clientEnv, command('warmup', { ...routerValues, base_url: new ShellVar('ROUTER_URL'), num_prompts: ucxRequests }, 'commands.warmup'))],
        },
      }
    : undefined;

  // Accuracy, once per task.
  const accuracyEnv = envValue(config.accuracy?.env_var, 'accuracy.env_var', use);
  const accuracy: StepPlan[] = accuracyTasks(config).map((task) => {
    const name = `accuracy ${task.name}`;
    const template = commandTemplate(config, 'accuracy');
    const completions = new JoinedWord([new ShellVar('ROUTER_URL'), '/v1/completions']);
    const modelArgs = new JoinedWord([
      'model=', modelPath, ',base_url=', completions, ...(task.modelArgsExtra ? [`,${task.modelArgsExtra}`] : []),
    ]);
    const words = command(
      'accuracy',
      {
        ...routerValues,
        base_url: new ShellVar('ROUTER_URL'),
        completions_url: completions,
        task: task.name,
        accuracy_model: task.model,
        model_args: modelArgs,
        model_args_extra: task.modelArgsExtra,
        output_dir: file(`accuracy_eval_${task.name}`),
        extra_args: extraKwargsWords(task, template),
      },
      `commands.accuracy (${task.name})`,
    );
    if (templatePlaceholders(template).includes('model_args')) use(modelPath, 'environment.model_path');
    return { name, log: file(jobFiles.accuracy(task.name)), words: [...onRouterNode, ...withEnv(name, accuracyEnv, words)] };
  });

  const exports = modeWorkerEnv(config);
  env.job = Object.fromEntries(exports.map((e) => [e.name, e.value]));
  const script: JobScriptPlan = {
    testId: input.testId,
    jobName: config.slurm.job_name,
    logDir,
    nodesNeeded: allocation.totalNodes,
    healthTimeoutS,
    healthIntervalS: launch.health_interval_s ?? DEFAULT_HEALTH_INTERVAL_S,
    nodeVars,
    routerPort,
    serverConfig: { path: file(jobFiles.serverConfig), template: serverConfigTemplate(allocation) },
    exports,
    secretVars: secrets.names,
    containerLaunch:
      useSrun && image
        ? {
            name: 'container',
            log: file(jobFiles.containerLaunch),
            words: ['srun', '--nodes', allocation.totalNodes, '--ntasks', allocation.totalNodes, '--ntasks-per-node', 1, ...containerFlags, 'echo', 'container up'],
          }
        : undefined,
    servers,
    router,
    waitLog: file(jobFiles.wait),
    benchLog: file(jobFiles.bench),
    ucxWarmup,
    benchmarks,
    accuracy,
    doneMarker: file(jobFiles.done),
  };
  return { allocation, script, env, jobEnv: secrets.env, unresolved: dedupe(unresolved) };
}

/** *_env_var given as `A=1 B=2` or as a mapping {A: 1}. */
function envValue(
  value: string | Record<string, unknown> | null | undefined,
  keyPath: string,
  use: (v: string | undefined, p: string) => string | undefined,
): EnvAssignment[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') {
    use(value, keyPath);
    return isPlaceholder(value) ? [] : parseEnvAssignments(value);
  }
  for (const [name, v] of Object.entries(value)) if (typeof v === 'string') use(v, `${keyPath}.${name}`);
  return envFromMapping(value);
}

/** accuracy.tasks.<t>.extra_kwargs as lm_eval flags; flags the template already has are skipped. */
function extraKwargsWords(task: AccuracyTask, template: ReturnType<typeof commandTemplate>): string[] {
  const present = new Set(typeof template === 'string' ? splitShellWords(template) : template);
  const words: string[] = [];
  for (const [key, value] of Object.entries(task.extraKwargs)) {
    const flag = `--${key}`;
    if (value === false || value === null || present.has(flag)) continue;
    words.push(flag);
    if (value !== true) words.push(typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return words;
}

function dedupe(items: Unresolved[]): Unresolved[] {
  const seen = new Map(items.map((u) => [u.path, u]));
  return [...seen.values()];
}
