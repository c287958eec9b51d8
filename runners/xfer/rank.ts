// Who this process is: rank, world size, local rank, node, and where the rendezvous store lives.
// Read from the variables its launcher sets, as the launcher declares them (runners/common/
// rank-variables.ts: srun, torchrun and the local launcher, Open MPI, PMI, Grid Engine, Flux).
import os from 'node:os';
import { RANK_VARIABLES, rankVariablesNamed, rankVariablesSet, type RankVariables } from '../common/rank-variables.ts';
import { XferError } from './errors.ts';

/** The launcher family whose variables named this rank (a row of RANK_VARIABLES), or 'single'. */
export type Launcher = string;

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
  const variables = launcherVariables(env);
  if (!variables) {
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
  const rank = int(env, variables.rank);
  const worldSize = int(env, variables.size);
  const job = `${variables.name}:${variables.job.map((name) => env[name] ?? '?').join('.')}`;
  const given = variables.storeHosts?.(env) ?? [];
  return check({
    rank,
    worldSize,
    localRank: variables.localRank && env[variables.localRank] !== undefined ? int(env, variables.localRank) : 0,
    localWorldSize: variables.localSize && env[variables.localSize] !== undefined ? int(env, variables.localSize) : (variables.localTasks?.(env) ?? worldSize),
    node: nodeOverride ?? (variables.node ? env[variables.node] : undefined) ?? os.hostname(),
    storeHosts: env.MASTER_ADDR ? [env.MASTER_ADDR] : given.length > 0 ? given : ['127.0.0.1'],
    storePorts: storePorts(env, job),
    job,
    launcher: variables.name,
  });
}

/**
 * The variables of the launcher that started this process: the row XFER_RANK_VARIABLES names (the
 * job script exports its launcher's), else the first row whose rank and size are set.
 */
function launcherVariables(env: Env): RankVariables | undefined {
  const named = env.XFER_RANK_VARIABLES;
  if (named === undefined || named === '') return rankVariablesSet(env);
  const row = rankVariablesNamed(named);
  if (!row) throw new XferError(`rank: XFER_RANK_VARIABLES='${named}' names no launcher's variables; expected one of ${RANK_VARIABLES.map((v) => v.name).join(', ')}`);
  if (env[row.rank] === undefined || env[row.size] === undefined) {
    throw new XferError(`rank: the ${row.name} launcher (${row.setBy}) sets ${row.rank} and ${row.size}, and this process has ${env[row.rank] === undefined ? row.rank : row.size} unset: was it started by that launcher?`);
  }
  return row;
}

/** MASTER_PORT when given; otherwise candidates derived from the job id, the same on every rank. */
function storePorts(env: Env, job: string): number[] {
  if (env.MASTER_PORT !== undefined) return [int(env, 'MASTER_PORT')];
  let hash = 2166136261;
  for (let i = 0; i < job.length; i++) hash = Math.imul(hash ^ job.charCodeAt(i), 16777619) >>> 0;
  const first = DERIVED_PORT_BASE + (hash % DERIVED_PORT_SPAN);
  return Array.from({ length: DERIVED_PORT_CANDIDATES }, (_, i) => first + i);
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
