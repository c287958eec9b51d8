// Who this process is: rank, world size, local rank, node, and where the rendezvous store lives.
// Read from the launcher's environment: SLURM (srun), torchrun, mpirun (Open MPI), or the local
// launcher (local-launch.ts), which sets torchrun's variables.
import os from 'node:os';
import { slurmStepNodes } from '../common/hostlist.ts';
import { XferError } from './errors.ts';

export type Launcher = 'slurm' | 'torchrun' | 'mpirun' | 'single';

export interface RankInfo {
  rank: number;
  worldSize: number;
  localRank: number;
  localWorldSize: number;
  /** Node name: ranks with the same node may share memory (shm, CUDA IPC). */
  node: string;
  /**
   * Where rank 0's store may be reached, tried in order: MASTER_ADDR, else (SLURM) the step's first
   * node by name, then the address srun was launched from (for node names that do not resolve).
   */
  storeHosts: string[];
  /** Ports to try in order for the store (one when MASTER_PORT is given). */
  storePorts: number[];
  /** Identifies the job step, so a rank never joins another job's store. */
  job: string;
  launcher: Launcher;
}

type Env = Record<string, string | undefined>;

/** Ports derived from a job id: a fixed window, several candidates in case one is taken. */
const DERIVED_PORT_BASE = 29_500;
const DERIVED_PORT_SPAN = 20_000;
const DERIVED_PORT_CANDIDATES = 8;

export function rankFromEnv(env: Env = process.env): RankInfo {
  const nodeOverride = env.XFER_NODE; // lets tests pretend ranks sit on different nodes
  if (env.RANK !== undefined && env.WORLD_SIZE !== undefined) {
    const rank = int(env, 'RANK');
    const worldSize = int(env, 'WORLD_SIZE');
    return check({
      rank,
      worldSize,
      localRank: env.LOCAL_RANK !== undefined ? int(env, 'LOCAL_RANK') : rank,
      localWorldSize: env.LOCAL_WORLD_SIZE !== undefined ? int(env, 'LOCAL_WORLD_SIZE') : worldSize,
      node: nodeOverride ?? os.hostname(),
      storeHosts: [env.MASTER_ADDR ?? '127.0.0.1'],
      storePorts: storePorts(env, env.XFER_JOB_ID ?? `${env.MASTER_ADDR}:${env.MASTER_PORT}`),
      job: env.XFER_JOB_ID ?? `torchrun:${env.MASTER_ADDR ?? ''}:${env.MASTER_PORT ?? ''}:${worldSize}`,
      launcher: 'torchrun',
    });
  }
  if (env.SLURM_PROCID !== undefined && env.SLURM_NTASKS !== undefined) {
    const job = `slurm:${env.SLURM_JOB_ID ?? '?'}.${env.SLURM_STEP_ID ?? '0'}`;
    const nodes = slurmStepNodes(env);
    return check({
      rank: int(env, 'SLURM_PROCID'),
      worldSize: int(env, 'SLURM_NTASKS'),
      localRank: env.SLURM_LOCALID !== undefined ? int(env, 'SLURM_LOCALID') : 0,
      localWorldSize: localTasks(env),
      node: nodeOverride ?? env.SLURMD_NODENAME ?? os.hostname(),
      storeHosts: env.MASTER_ADDR ? [env.MASTER_ADDR] : nonEmpty([nodes[0], env.SLURM_LAUNCH_NODE_IPADDR], '127.0.0.1'),
      storePorts: storePorts(env, job),
      job,
      launcher: 'slurm',
    });
  }
  if (env.OMPI_COMM_WORLD_RANK !== undefined && env.OMPI_COMM_WORLD_SIZE !== undefined) {
    const worldSize = int(env, 'OMPI_COMM_WORLD_SIZE');
    const job = `mpirun:${env.OMPI_MCA_orte_hnp_uri ?? env.PMIX_NAMESPACE ?? env.OMPI_COMM_WORLD_SIZE}`;
    return check({
      rank: int(env, 'OMPI_COMM_WORLD_RANK'),
      worldSize,
      localRank: env.OMPI_COMM_WORLD_LOCAL_RANK !== undefined ? int(env, 'OMPI_COMM_WORLD_LOCAL_RANK') : 0,
      localWorldSize: env.OMPI_COMM_WORLD_LOCAL_SIZE !== undefined ? int(env, 'OMPI_COMM_WORLD_LOCAL_SIZE') : worldSize,
      node: nodeOverride ?? os.hostname(),
      // mpirun gives no address for rank 0: it must be passed as MASTER_ADDR on multi-node runs
      storeHosts: [env.MASTER_ADDR ?? '127.0.0.1'],
      storePorts: storePorts(env, job),
      job,
      launcher: 'mpirun',
    });
  }
  return {
    rank: 0,
    worldSize: 1,
    localRank: 0,
    localWorldSize: 1,
    node: nodeOverride ?? os.hostname(),
    storeHosts: ['127.0.0.1'],
    storePorts: storePorts(env, `single:${process.pid}`),
    job: `single:${process.pid}`,
    launcher: 'single',
  };
}

/** MASTER_PORT when given; otherwise candidates derived from the job id, the same on every rank. */
function storePorts(env: Env, job: string): number[] {
  if (env.MASTER_PORT !== undefined) return [int(env, 'MASTER_PORT')];
  let hash = 2166136261;
  for (let i = 0; i < job.length; i++) hash = Math.imul(hash ^ job.charCodeAt(i), 16777619) >>> 0;
  const first = DERIVED_PORT_BASE + (hash % DERIVED_PORT_SPAN);
  return Array.from({ length: DERIVED_PORT_CANDIDATES }, (_, i) => first + i);
}

/** SLURM_TASKS_PER_NODE looks like "4(x2),3": the count for this node is enough here. */
function localTasks(env: Env): number {
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

function nonEmpty(hosts: (string | undefined)[], fallback: string): string[] {
  const list = hosts.filter((h): h is string => !!h);
  return list.length > 0 ? list : [fallback];
}

function int(env: Env, name: string): number {
  const raw = env[name];
  const value = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isInteger(value) || value < 0) {
    throw new XferError(`rank: environment variable ${name}='${raw}' is not a non-negative integer`);
  }
  return value;
}

function check(info: RankInfo): RankInfo {
  if (info.worldSize < 1 || info.rank >= info.worldSize) {
    throw new XferError(`rank: rank ${info.rank} is outside a world of ${info.worldSize} (launcher ${info.launcher})`);
  }
  return info;
}
