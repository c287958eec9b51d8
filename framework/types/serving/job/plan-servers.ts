// The steps of a serving job that serve: the container started once on every node, one worker
// step per server of the allocation, and the router in front of them.
import { ShellVar, splitShellWords } from '../../../../runners/common/shell.ts';
import { jobFiles } from './job-files.ts';
import { DEFAULT_NUMA_COMMAND } from './commands.ts';
import { onRouterNode, type PlanContext } from './plan-context.ts';
import type { ServerAllocation } from './allocation.ts';
import type { JobScriptPlan, StepPlan } from './job-script.ts';

/** With a container the launcher can start: one task per node starts it, so every later step finds it there. */
export function planContainerLaunch(ctx: PlanContext): StepPlan | undefined {
  if (!ctx.container || !ctx.launcher.containers) return undefined;
  const nodes = ctx.allocation.totalNodes;
  // Not a step of env_vars.json: it sets no environment and runs nothing of the config's.
  return {
    name: 'container',
    log: ctx.file(jobFiles.containerLaunch),
    launch: { nodes, tasks: nodes, tasksPerNode: 1, container: ctx.container, command: ['echo', 'container up'] },
  };
}

/**
 * Script variables naming each server's nodes (for the launcher) and its first node's address
 * (for its URL): GEN_0_NODES, GEN_0_HOST.
 */
export function planNodeVars(ctx: PlanContext): JobScriptPlan['nodeVars'] {
  return ctx.allocation.servers.flatMap((server) => [
    { name: `${server.name}_NODES`, nodes: server.nodes, of: 'NODES' as const },
    { name: `${server.name}_HOST`, nodes: [server.nodes[0]], of: 'HOSTS' as const },
  ]);
}

/**
 * One step per server: its ranks on its nodes and GPUs, with worker_env_var, its role's
 * variables (the engine's generation-only switches last, as upstream's build_worker_environment
 * sets them), the profiler and numactl in front when the config asks for them.
 */
export function planWorkers(ctx: PlanContext): StepPlan[] {
  const { config, engine } = ctx;
  const workerEnv = ctx.envOf(config.environment.worker_env_var, 'environment.worker_env_var');
  const roleEnv = {
    CTX: ctx.envOf(config.environment.ctx_worker_env_var, 'environment.ctx_worker_env_var'),
    GEN: [...ctx.envOf(config.environment.gen_worker_env_var, 'environment.gen_worker_env_var'), ...engine.env.generationWorkers(config)],
  };
  const numa = config.slurm.numa_bind ? splitShellWords(config.launch?.numa_command ?? DEFAULT_NUMA_COMMAND) : [];
  const mpi = config.launch?.mpi === undefined ? engine.pmi : config.launch.mpi;
  return ctx.allocation.servers.map((server: ServerAllocation) => {
    const profiler = config.profiling?.nsys_on
      ? engine.profiler.wrap(
          ctx.file(`nsys_worker_${server.name}`),
          (server.role === 'CTX' ? config.profiling.ctx_profile_range : config.profiling.gen_profile_range) ?? engine.profiler.ranges[server.role],
        )
      : { words: [], env: [] };
    const assignments = [
      ...workerEnv,
      ...roleEnv[server.role],
      { name: 'CUDA_VISIBLE_DEVICES', value: server.gpuIds.join(',') },
      ...profiler.env,
    ];
    const worker = ctx.command(
      'worker',
      {
        ...ctx.common,
        host: new ShellVar(`${server.name}_HOST`),
        port: server.port,
        config: ctx.file(engine.files.workerConfig[server.role]),
        role: server.role.toLowerCase(),
        index: server.index,
        server: server.name,
      },
      `commands.worker (${server.name})`,
    );
    const placement = {
      nodes: server.nodes.length,
      tasks: server.worldSize,
      tasksPerNode: server.ntasksPerNode,
      nodeList: new ShellVar(`${server.name}_NODES`),
      sharesResources: true,
      ...(mpi && mpi !== 'none' ? { pmi: mpi } : {}),
      endsOnTaskFailure: true,
      container: ctx.container,
    };
    return ctx.step(server.name, ctx.file(engine.files.serverLog(server.role, server.index)), placement, assignments, [...profiler.words, ...numa, ...worker]);
  });
}

/** The values of the router's URL every command on the router's node gets. */
export function routerValues(ctx: PlanContext) {
  return { ...ctx.common, host: new ShellVar('ROUTER_HOST'), port: ctx.allocation.router.port };
}

/** The router on the first node, with server_env_var, reading the engine's router config. */
export function planRouter(ctx: PlanContext, healthTimeoutS: number): StepPlan {
  const { config, engine } = ctx;
  return ctx.step(
    'ROUTER',
    ctx.file(engine.files.routerLog),
    onRouterNode(ctx),
    ctx.envOf(config.environment.server_env_var, 'environment.server_env_var'),
    ctx.command('router', { ...routerValues(ctx), config: ctx.file(engine.files.routerConfig), health_timeout: healthTimeoutS }, 'commands.router'),
  );
}
