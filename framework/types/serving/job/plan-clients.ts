// The steps of a serving job that talk to the router: upstream's warm-ups, the benchmark client
// once per concurrency, and the accuracy tasks. Each runs as one task on the router's node. The
// warm-ups and the client share the client's environment (benchmark.env_var).
import { JoinedWord, ShellVar, splitShellWords, type EnvAssignment } from '../../../../runners/common/shell.ts';
import { templatePlaceholders, type TemplateValues } from './command-template.ts';
import { commandTemplate } from './commands.ts';
import { onRouterNode, type PlanContext } from './plan-context.ts';
import { routerValues } from './plan-servers.ts';
import { jobFiles } from './job-files.ts';
import type { WarmupPlan } from './warmup.ts';
import type { BenchmarkPlan, StepPlan } from './job-script.ts';
import { accuracyTasks, effectiveConcurrencies, type AccuracyTask } from '../serving-config.ts';

const routerUrl = () => new ShellVar('ROUTER_URL');

/** The client's values for one run: its concurrency, prompts, dataset and result folder. */
function clientValues(ctx: PlanContext, concurrency: number, numPrompts: number, resultDir: string, datasetFile: string | undefined): TemplateValues {
  const multiRound = ctx.config.benchmark.multi_round ?? 1;
  return {
    concurrency,
    num_prompts: numPrompts,
    multi_round: multiRound,
    dataset_file: datasetFile,
    result_dir: resultDir,
    benchmark_ratio: ctx.config.benchmark.benchmark_ratio,
    // run_benchmark_aiperf.sh's limit: 20 minutes per round.
    benchmark_duration: multiRound * 1200,
  };
}

/**
 * The client once per concurrency (benchmark.enable_benchmark), each after its exact-shape warm-up
 * when the config asks for one (warmup.ts), all writing to the bench log.
 */
export function planBenchmarks(ctx: PlanContext, warmups: WarmupPlan, clientEnv: EnvAssignment[]): BenchmarkPlan[] {
  const { config } = ctx;
  if (config.benchmark.enable_benchmark === false) return [];
  const multiRound = config.benchmark.multi_round ?? 1;
  const clientStep = (name: string, values: TemplateValues): StepPlan =>
    ctx.step(name, ctx.file(jobFiles.bench), onRouterNode(ctx), clientEnv,
      ctx.command('client', { ...routerValues(ctx), base_url: routerUrl(), ...values }, 'commands.client'));
  return effectiveConcurrencies(config).map((concurrency) => {
    const numPrompts = concurrency * multiRound;
    const resultDir = ctx.file(`concurrency_${concurrency}`);
    const exact = warmups.exact(concurrency);
    const measuredDataset = exact?.split?.measurement ?? config.benchmark.dataset_file;
    return {
      concurrency,
      numPrompts,
      resultDir,
      step: clientStep(`client c=${concurrency}`, clientValues(ctx, concurrency, numPrompts, resultDir, measuredDataset)),
      exactWarmup: exact && {
        ...exact,
        step: clientStep(`exact warmup c=${concurrency}`, clientValues(ctx, concurrency, exact.prompts, exact.resultDir, exact.split?.warmup ?? config.benchmark.dataset_file)),
      },
    };
  });
}

/** The UCX warm-up of e2e mode before anything is measured (warmup.ts), when the client runs at all. */
export function planUcxWarmup(ctx: PlanContext, warmups: WarmupPlan, clientEnv: EnvAssignment[]): { requests: number; step: StepPlan } | undefined {
  const requests = ctx.config.benchmark.enable_benchmark !== false ? warmups.ucxRequests : 0;
  if (requests <= 0) return undefined;
  return {
    requests,
    step: ctx.step('ucx warmup', ctx.file(jobFiles.bench), onRouterNode(ctx), clientEnv,
      ctx.command('warmup', { ...routerValues(ctx), base_url: routerUrl(), num_prompts: requests }, 'commands.warmup')),
  };
}

/** lm-eval (or the config's command) once per accuracy task, against the engine's completions endpoint. */
export function planAccuracy(ctx: PlanContext): StepPlan[] {
  const { config, engine } = ctx;
  const accuracyEnv = ctx.envOf(config.accuracy?.env_var, 'accuracy.env_var');
  const modelPath = config.environment.model_path;
  return accuracyTasks(config).map((task) => {
    const template = commandTemplate(config, 'accuracy');
    const completions = new JoinedWord([routerUrl(), engine.completionsPath]);
    const modelArgs = new JoinedWord([
      'model=', modelPath, ',base_url=', completions, ...(task.modelArgsExtra ? [`,${task.modelArgsExtra}`] : []),
    ]);
    const words = ctx.command(
      'accuracy',
      {
        ...routerValues(ctx),
        base_url: routerUrl(),
        completions_url: completions,
        task: task.name,
        accuracy_model: task.model,
        model_args: modelArgs,
        model_args_extra: task.modelArgsExtra,
        output_dir: ctx.file(`accuracy_eval_${task.name}`),
        extra_args: extraKwargsWords(task, template),
      },
      `commands.accuracy (${task.name})`,
    );
    if (templatePlaceholders(template).includes('model_args')) ctx.use(modelPath, 'environment.model_path');
    return ctx.step(`accuracy ${task.name}`, ctx.file(jobFiles.accuracy(task.name)), onRouterNode(ctx), accuracyEnv, words);
  });
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
