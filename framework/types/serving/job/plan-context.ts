// What every step of a serving job's plan shares: the config with its engine (../engines/) and
// launcher (framework/scheduler/launch/), the allocation, where its files go, the placeholders
// still unresolved, and each step's environment as env_vars.json records it. The named steps of
// job-plan.ts (plan-servers.ts, plan-clients.ts) build on it.
import path from 'node:path';
import { allocate, type Allocation } from './allocation.ts';
import { expandTemplate, templatePlaceholders, type TemplateValues } from './command-template.ts';
import { commandTemplate, type CommandKind } from './commands.ts';
import { JobSecrets } from './job-secrets.ts';
import type { StepPlan } from './job-script.ts';
import { derivedContainerMounts, mountsLeftToFramework } from './container-mounts.ts';
import { engineOf } from '../engines/engines.ts';
import type { ServingEngine } from '../engines/engine.ts';
import type { ServingConfig } from '../serving-config.ts';
import { launcherNamed } from '../../../scheduler/launch/launchers.ts';
import type { Launcher, LaunchStep, StepContainer } from '../../../scheduler/launch/launcher.ts';
import { isPlaceholder } from '../../../../runners/common/placeholder.ts';
import { envFromMapping, parseEnvAssignments, ShellVar, type EnvAssignment, type Word } from '../../../../runners/common/shell.ts';

export const DEFAULT_CONTAINER_NAME = 'disagg-bench';

export interface PlanInput {
  testId: string;
  config: ServingConfig;
  logDir: string;
  packageRoot: string;
  /** WORK_DIR (mounted into the container when the config leaves the mounts to the framework). */
  workDir?: string;
  /** The run's launcher (JobBuildContext.launcher) unless the config names one; absent: srun. */
  launcher?: string;
}

/** A value the job needs that is still a `<placeholder>`. */
export interface Unresolved {
  path: string;
  value: string;
}

export interface PlanContext {
  input: PlanInput;
  config: ServingConfig;
  engine: ServingEngine;
  /** The registered name of the launcher and the launcher itself. */
  launcherName: string;
  launcher: Launcher;
  allocation: Allocation;
  /** Every step's container (with an image); the launcher decides whether it starts one. */
  container?: StepContainer;
  /** The values every command template knows. */
  common: TemplateValues;
  /** The environment of each step by its name (env_vars.json), secrets redacted. */
  env: Record<string, Record<string, string>>;
  secrets: JobSecrets;
  unresolved: Unresolved[];
  /** A file in the test's log folder. */
  file(name: string): string;
  /** A config string the job uses, noted when it is still a placeholder. */
  use(value: string | undefined, keyPath: string): string | undefined;
  /** `*_env_var` as assignments (given as `A=1 B=2` or as a mapping). */
  envOf(value: string | Record<string, unknown> | null | undefined, keyPath: string): EnvAssignment[];
  /** A command template expanded; `what` names it in errors. */
  command(kind: CommandKind, values: TemplateValues, what: string): Word[];
  /** A step: where it runs, its environment (recorded under its name), its command. */
  step(name: string, log: string, placement: LaunchStep, assignments: EnvAssignment[], command: Word[]): StepPlan;
}

/** Where a config's placeholders come from, to name one that is unresolved. */
const SOURCES: Record<string, string> = { model: 'environment.model_path', dataset_file: 'benchmark.dataset_file' };

/** The config's `launch.launcher`, else the run's: `direct` is the local launcher (no launcher at all). */
function launcherOf(config: ServingConfig, runs: string | undefined): string {
  const given = config.launch?.launcher;
  if (given === 'direct') return 'local';
  return given ?? runs ?? 'srun';
}

export function planContext(input: PlanInput): PlanContext {
  const { config, logDir } = input;
  const unresolved: Unresolved[] = [];
  const env: Record<string, Record<string, string>> = {};
  const secrets = new JobSecrets();
  const file = (name: string) => path.join(logDir, name);
  const use = (value: string | undefined, keyPath: string): string | undefined => {
    if (value !== undefined && isPlaceholder(value)) unresolved.push({ path: keyPath, value });
    return value;
  };
  const launcherName = launcherOf(config, input.launcher);
  return {
    input,
    config,
    engine: engineOf(config),
    launcherName,
    launcher: launcherNamed(launcherName, 'launch.launcher'),
    allocation: allocate(config),
    container: containerOf(input, use),
    common: {
      model: config.environment.model_path,
      model_name: config.metadata.model_name,
      log_dir: logDir,
      package_root: input.packageRoot,
      input_length: config.benchmark.input_length,
      output_length: config.benchmark.output_length,
    },
    env,
    secrets,
    unresolved,
    file,
    use,
    envOf: (value, keyPath) => envAssignments(value, keyPath, use),
    command(kind, values, what) {
      const template = commandTemplate(config, kind);
      for (const name of templatePlaceholders(template)) {
        const value = values[name];
        if (typeof value === 'string' && SOURCES[name]) use(value, SOURCES[name]);
      }
      return expandTemplate(template, values, what);
    },
    step(name, log, placement, assignments, command) {
      env[name] = Object.fromEntries(assignments.map((a) => [a.name, secrets.shown(a)]));
      return { name, log, launch: { ...placement, env: assignments.map((a) => secrets.word(a)), command } };
    },
  };
}

/** environment.container_image with its mounts: the config's, or upstream's derived ones. */
function containerOf(input: PlanInput, use: PlanContext['use']): StepContainer | undefined {
  const { config } = input;
  const given = config.environment.container_image;
  if (!given?.trim()) return undefined;
  const image = use(given, 'environment.container_image')!;
  const mount = config.environment.container_mount;
  const mounts = mountsLeftToFramework(mount)
    ? derivedContainerMounts({ config, workDir: input.workDir ?? input.packageRoot, packageRoot: input.packageRoot, logDir: input.logDir })
    : mount!.trim();
  return { image, name: config.launch?.container_name ?? DEFAULT_CONTAINER_NAME, ...(mounts ? { mounts } : {}) };
}

/** *_env_var given as `A=1 B=2` or as a mapping {A: 1}. */
function envAssignments(
  value: string | Record<string, unknown> | null | undefined,
  keyPath: string,
  use: PlanContext['use'],
): EnvAssignment[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') {
    use(value, keyPath);
    return isPlaceholder(value) ? [] : parseEnvAssignments(value);
  }
  for (const [name, v] of Object.entries(value)) if (typeof v === 'string') use(v, `${keyPath}.${name}`);
  return envFromMapping(value);
}

/** The router's node: where the router, the clients and accuracy run, one task each, beside the servers. */
export function onRouterNode(ctx: PlanContext): LaunchStep {
  return { nodes: 1, tasks: 1, tasksPerNode: 1, nodeList: new ShellVar('ROUTER_NODE'), sharesResources: true, container: ctx.container };
}
