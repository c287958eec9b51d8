// Which GPUs a SLURM partition's nodes have, from the gres SLURM knows them by (`sinfo`): for a run
// started where there is no GPU to ask (a login node), the GPU type of the nodes its jobs will get.
import { runSlurmCommand } from './slurm-command.ts';
import { SchedulerError } from './scheduler.ts';

export interface PartitionGpus {
  /** The partition asked about (the default one when none was named). */
  partition: string;
  /** Distinct gres GPU types of its nodes, as SLURM spells them (`h200`, `nvidia_h100_80gb_hbm3`). */
  types: string[];
  /** Nodes of the partition that declare GPUs without a type (`gpu:4`). */
  untypedNodes: string[];
  /** Nodes of the partition. */
  nodes: number;
  /** What the smallest of its nodes holds (sinfo's %c and gres counts): where a job's tasks per node must fit. */
  cpusPerNode?: number;
  gpusPerNode?: number;
}

const SINFO_ARGS = ['--noheader', '--Node', '--format=%N|%P|%G|%c'];

/** GPU gres items of one `%G` cell: `gpu:h200:8(S:0-1),shard:8` -> [{ type: 'h200' }]. */
export function gresGpuItems(cell: string): Array<{ type?: string; count: number }> {
  if (cell.trim() === '(null)') return [];
  return cell
    .replace(/\([^)]*\)/g, '') // socket bindings: (S:0-1), (S:0,1)
    .split(',')
    .map((item) => item.trim().split(':'))
    .filter((parts) => parts[0] === 'gpu')
    .map((parts) => {
      // gpu:<type>:<count>, gpu:<count>, gpu:<type>, gpu
      const type = parts.length >= 3 ? parts[1] : parts.length === 2 && !/^\d+$/.test(parts[1]) ? parts[1] : undefined;
      const counted = parts.length >= 3 ? parts[2] : parts.length === 2 && /^\d+$/.test(parts[1]) ? parts[1] : '1';
      const count = /^\d+$/.test(counted) ? Number(counted) : 1;
      return type ? { type, count } : { count };
    });
}

/**
 * The partition's nodes and their GPU types from `sinfo --Node` lines (`n1|debug*|gpu:h200:4`):
 * `partition` names one, else the default (SLURM marks it with `*`). Undefined when no such
 * partition is there.
 */
export function parsePartitionGpus(stdout: string, partition?: string): PartitionGpus | undefined {
  const rows = stdout
    .split('\n')
    .map((line) => line.trim().split('|'))
    .filter((cells) => cells.length === 3 || cells.length === 4);
  const mine = rows.filter(([, p]) => (partition ? p.replace(/\*$/, '') === partition : p.endsWith('*')));
  if (mine.length === 0) return undefined;
  const types = new Set<string>();
  const untyped = new Set<string>();
  const nodes = new Set<string>();
  let cpus: number | undefined;
  let gpus: number | undefined;
  for (const [node, , gres, cpuCell] of mine) {
    nodes.add(node);
    let nodeGpus = 0;
    for (const item of gresGpuItems(gres)) {
      if (item.type) types.add(item.type);
      else untyped.add(node);
      nodeGpus += item.count;
    }
    gpus = Math.min(gpus ?? nodeGpus, nodeGpus);
    if (cpuCell !== undefined && /^\d+$/.test(cpuCell.trim())) cpus = Math.min(cpus ?? Number(cpuCell), Number(cpuCell));
  }
  const sizes = mine[0].length === 4 ? { ...(cpus !== undefined && { cpusPerNode: cpus }), gpusPerNode: gpus ?? 0 } : {};
  return { partition: mine[0][1].replace(/\*$/, ''), types: [...types].sort(), untypedNodes: [...untyped].sort(), nodes: nodes.size, ...sizes };
}

/**
 * Asks SLURM (one `sinfo`) which GPU types the partition's nodes have. Throws, saying why, when
 * sinfo fails or knows no such partition.
 */
export async function partitionGpus(partition: string | undefined, env?: Record<string, string | undefined>): Promise<PartitionGpus> {
  const outcome = await runSlurmCommand('sinfo', SINFO_ARGS, { env, timeoutMs: 30_000 });
  if (!outcome.ok) {
    const why = outcome.failure ?? (outcome.stderr.trim().split('\n').pop() || `exit code ${outcome.exitCode}`);
    throw new SchedulerError(`${outcome.command} failed: ${why}`, outcome.command);
  }
  const found = parsePartitionGpus(outcome.stdout, partition);
  if (!found) throw new SchedulerError(partition ? `sinfo lists no partition ${partition}` : 'sinfo lists no default partition', 'sinfo');
  return found;
}
