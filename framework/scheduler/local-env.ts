// What a job of the local scheduler sees: its virtual node names, its GPUs split over those nodes,
// and the SLURM-like environment of a batch job. The shims in local-bin/ read the same variables,
// so this file and local-bin/srun are the two halves of one contract:
//   SLURM_JOB_NODELIST      comma-separated virtual node names (a valid SLURM hostlist)
//   DISAGG_LOCAL_NODE_GPUS  the job's GPU ids per virtual node, nodes separated by ';'
//   DISAGG_LOCAL_JOB_DIR    the job's private folder (srun's step counter, scancel's marker)
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobRequest } from './scheduler.ts';
import { InputError } from '../../runners/common/errors.ts';

/** The folder holding the srun/scontrol/scancel shims; first on a local job's PATH. */
export const localBinDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'local-bin');

/** Written into the job folder by the scancel shim when a job cancels itself. */
export const selfCancelMarker = 'cancel-requested';

/**
 * Virtual node names of a job asking for `count` nodes on this one host: the host's own name for
 * one node; loopback addresses 127.0.0.1, 127.0.0.2, ... for several, because they are distinct,
 * resolve without /etc/hosts, and let servers on different "nodes" bind the same port (Linux
 * routes all of 127/8 to lo; macOS needs `ifconfig lo0 alias 127.0.0.N`).
 */
export function defaultVirtualNodeNames(count: number, nodeName: string): string[] {
  if (count <= 1) return [nodeName];
  if (count > 254) throw new InputError(`a local job can have at most 254 virtual nodes, asked ${count}`);
  return Array.from({ length: count }, (_, i) => `127.0.0.${i + 1}`);
}

/**
 * Splits a job's GPUs over its virtual nodes block-wise (earlier nodes take the remainder). With
 * fewer GPUs than nodes (the request was capped to what this host has) every node sees all of them.
 */
export function splitGpusOverNodes(gpus: readonly string[], nodeCount: number): string[][] {
  if (gpus.length < nodeCount) return Array.from({ length: nodeCount }, () => [...gpus]);
  const base = Math.floor(gpus.length / nodeCount);
  const extra = gpus.length % nodeCount;
  const slices: string[][] = [];
  let next = 0;
  for (let node = 0; node < nodeCount; node++) {
    const size = base + (node < extra ? 1 : 0);
    slices.push(gpus.slice(next, next + size));
    next += size;
  }
  return slices;
}

/**
 * GPU ids this host offers by default: the entries of CUDA_VISIBLE_DEVICES when it is set (so jobs
 * see the ids their parent was given), else one id per /dev/nvidiaN device file, else none.
 */
export function detectGpuIds(env: NodeJS.ProcessEnv, devNames: readonly string[]): string[] {
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined) return visible.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const count = devNames.filter((name) => /^nvidia\d+$/.test(name)).length;
  return Array.from({ length: count }, (_, i) => String(i));
}

export interface BatchEnvironmentInput {
  id: string;
  request: JobRequest;
  nodes: string[];
  nodeGpus: string[][];
  jobDir: string;
  /** The environment the scheduler runs in; the job inherits it like sbatch's --export=ALL. */
  baseEnv: NodeJS.ProcessEnv;
}

/** The environment of the batch script, as sbatch would give it on the job's first node. */
export function batchEnvironment(input: BatchEnvironmentInput): Record<string, string> {
  const { id, request, nodes, nodeGpus } = input;
  const res = request.resources;
  const ntasks = Math.max(1, res.ntasks);
  const ntasksPerNode = res.ntasksPerNode ?? Math.ceil(ntasks / nodes.length);
  const nodeList = nodes.join(',');
  const slurm: Record<string, string> = {
    SLURM_JOB_ID: id,
    SLURM_JOBID: id,
    SLURM_JOB_NAME: request.name,
    SLURM_JOB_NODELIST: nodeList,
    SLURM_NODELIST: nodeList,
    SLURM_NNODES: String(nodes.length),
    SLURM_JOB_NUM_NODES: String(nodes.length),
    SLURM_NTASKS: String(ntasks),
    SLURM_NPROCS: String(ntasks),
    SLURM_NTASKS_PER_NODE: String(ntasksPerNode),
    SLURM_CPUS_PER_TASK: String(res.cpusPerTask ?? 1),
    SLURM_SUBMIT_DIR: request.workDir,
    SLURM_SUBMIT_HOST: os.hostname(),
    SLURM_JOB_PARTITION: 'local',
    SLURM_CLUSTER_NAME: 'local',
    SLURMD_NODENAME: nodes[0],
    SLURM_NODEID: '0',
    SLURM_PROCID: '0',
    SLURM_LOCALID: '0',
    // The batch script runs on the first node, so it sees that node's GPUs (as on a cluster).
    CUDA_VISIBLE_DEVICES: nodeGpus[0].join(','),
    DISAGG_LOCAL_NODE_GPUS: nodeGpus.map((g) => g.join(',')).join(';'),
    DISAGG_LOCAL_JOB_DIR: input.jobDir,
  };
  if (res.gpusPerNode) slurm.SLURM_GPUS_ON_NODE = String(nodeGpus[0].length);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.baseEnv)) {
    // A scheduler running inside a SLURM job must not leak that job's step variables.
    if (value !== undefined && !/^SLURM_|^SLURMD_/.test(key)) env[key] = value;
  }
  Object.assign(env, slurm, request.env ?? {});
  env.PATH = [localBinDir, env.PATH].filter(Boolean).join(path.delimiter);
  return env;
}
