// How a task started by a launcher learns who it is: the variables each launcher family sets for
// its tasks (rank, world size, local rank, node, job step, where rank 0 is reached). One table for
// both sides: a launcher (framework/scheduler/launch/) names its row, and the engine's ranks
// (runners/xfer/rank.ts) read the row their launcher names, so neither restates the other.
import { slurmStepNodes } from './hostlist.ts';

type Env = Record<string, string | undefined>;

export interface RankVariables {
  /** What a launcher's `rankVariables` and XFER_RANK_VARIABLES call it. */
  name: string;
  /** Who sets them, in words for messages and docs. */
  setBy: string;
  rank: string;
  size: string;
  localRank?: string;
  localSize?: string;
  /** The node's name as the launcher knows it; absent: the host name. */
  node?: string;
  /** Variables that together identify the job step, so a rank never joins another step's store. */
  job: string[];
  /** Where rank 0 may be reached, tried in order; absent or empty: MASTER_ADDR, else this host. */
  storeHosts?: (env: Env) => string[];
  /** Tasks on this node, when no single variable says it. */
  localTasks?: (env: Env) => number | undefined;
}

const slurm: RankVariables = {
  name: 'slurm',
  setBy: 'srun (SLURM)',
  rank: 'SLURM_PROCID',
  size: 'SLURM_NTASKS',
  localRank: 'SLURM_LOCALID',
  node: 'SLURMD_NODENAME',
  job: ['SLURM_JOB_ID', 'SLURM_STEP_ID'],
  // The step's first node by name, then the address srun was started from (names that do not resolve).
  storeHosts: (env) => [slurmStepNodes(env)[0], env.SLURM_LAUNCH_NODE_IPADDR].filter((h): h is string => !!h),
  localTasks: slurmLocalTasks,
};

/**
 * Every launcher family known here, in the order a rank tries them when XFER_RANK_VARIABLES names
 * none: torchrun's variables first (the local launcher sets them, and a user's MASTER_ADDR wins).
 */
export const RANK_VARIABLES: readonly RankVariables[] = [
  {
    name: 'torchrun', setBy: 'torchrun and the local launcher', rank: 'RANK', size: 'WORLD_SIZE',
    localRank: 'LOCAL_RANK', localSize: 'LOCAL_WORLD_SIZE', job: ['XFER_JOB_ID', 'MASTER_ADDR', 'MASTER_PORT', 'WORLD_SIZE'],
  },
  slurm,
  {
    // mpirun gives no address for rank 0: multi-node runs pass it as MASTER_ADDR.
    name: 'openmpi', setBy: 'mpirun (Open MPI)', rank: 'OMPI_COMM_WORLD_RANK', size: 'OMPI_COMM_WORLD_SIZE',
    localRank: 'OMPI_COMM_WORLD_LOCAL_RANK', localSize: 'OMPI_COMM_WORLD_LOCAL_SIZE', job: ['OMPI_MCA_orte_hnp_uri', 'PMIX_NAMESPACE', 'OMPI_COMM_WORLD_SIZE'],
  },
  {
    // The simple PMI of MPICH's and Intel MPI's Hydra (mpiexec).
    name: 'pmi', setBy: 'mpiexec (Hydra, PMI-1)', rank: 'PMI_RANK', size: 'PMI_SIZE',
    localRank: 'MPI_LOCALRANKID', localSize: 'MPI_LOCALNRANKS', job: ['PMI_KVSNAME', 'PMI_SIZE'],
  },
  {
    // Grid Engine gives a parallel job its hosts (PE_HOSTFILE), not ranks: its launcher
    // (framework/scheduler/launch/gridengine.ts) starts each task with these.
    name: 'gridengine', setBy: 'the gridengine launcher (qrsh -inherit over the job\'s hosts)', rank: 'DISAGG_TASK_RANK', size: 'DISAGG_TASK_COUNT',
    localRank: 'DISAGG_TASK_LOCAL_RANK', localSize: 'DISAGG_TASK_LOCAL_COUNT', job: ['JOB_ID', 'DISAGG_STEP_ID'],
    storeHosts: (env) => (env.DISAGG_TASK_FIRST_HOST ? [env.DISAGG_TASK_FIRST_HOST] : []),
  },
  {
    name: 'flux', setBy: 'flux run', rank: 'FLUX_TASK_RANK', size: 'FLUX_JOB_SIZE',
    localRank: 'FLUX_TASK_LOCAL_ID', job: ['FLUX_JOB_ID'],
  },
];

export function rankVariablesNamed(name: string): RankVariables | undefined {
  return RANK_VARIABLES.find((v) => v.name === name);
}

/** The row whose rank and size are both set, first in the table's order; undefined: none is. */
export function rankVariablesSet(env: Env): RankVariables | undefined {
  return RANK_VARIABLES.find((v) => env[v.rank] !== undefined && env[v.size] !== undefined);
}

/** SLURM_TASKS_PER_NODE looks like "4(x2),3": the count for this node (SLURM_NODEID). */
function slurmLocalTasks(env: Env): number | undefined {
  const perNode = env.SLURM_TASKS_PER_NODE;
  if (!perNode || env.SLURM_NODEID === undefined) return env.SLURM_NTASKS_PER_NODE ? Number(env.SLURM_NTASKS_PER_NODE) : 1;
  const counts: number[] = [];
  for (const part of perNode.split(',')) {
    const m = /^(\d+)(?:\(x(\d+)\))?$/.exec(part.trim());
    if (!m) return 1;
    for (let i = 0; i < Number(m[2] ?? 1); i++) counts.push(Number(m[1]));
  }
  return counts[Number(env.SLURM_NODEID)] ?? 1;
}
