// The NIXL EP tests' multi-node form: one command per node starts --num-processes
// ranks itself, and the node's place in the job comes from WORLD_SIZE (the number of NODES), RANK
// (this node's rank) and MASTER_ADDR, or from --world-size / --rank / --master-addr, which win.
// Total ranks = nodes x --num-processes; node k holds ranks k*P .. k*P+P-1. Under srun with one
// task per node, SLURM's task count and id are the nodes and the node rank. With srun tasks that
// are ranks themselves, --num-processes must agree with them: a run never has another rank count
// than its flags ask for.
import { slurmStepNodes } from '../../../common/hostlist.ts';
import { BenchOptionError, intOption } from '../common/options.ts';
import { takeOptions } from '../../../common/args/take-options.ts';

export interface EpNodeWorld {
  nodes: number;
  nodeRank: number;
  ranksPerNode: number;
  masterAddr: string;
  masterPort?: number;
  /** Where the node-level values came from, for the banner and errors. */
  source: string;
}

export interface EpNodeFlags {
  node?: EpNodeWorld;
  /** argv without --num-processes, --world-size, --rank, --master-addr, --master-port. */
  rest: string[];
  /** Srun/mpirun tasks that are ranks themselves and agree with --num-processes (nothing to start). */
  ranksAreTasks?: boolean;
}

export const NODE_FLAGS = ['--num-processes', '--world-size', '--rank', '--master-addr', '--master-port'];

type Env = Record<string, string | undefined>;

export function epNodeWorld(argv: string[], env: Env = process.env): EpNodeFlags {
  const { taken, rest } = takeOptions(argv, NODE_FLAGS);
  const flags = new Map<string, string>();
  for (const { name, value } of taken) {
    if (value === undefined) throw new BenchOptionError(`${name} needs a value`);
    flags.set(name.slice(2), value);
  }
  const given = [...flags.keys()];
  if (!flags.has('num-processes')) {
    if (given.length > 0) {
      throw new BenchOptionError(`--${given[0]} places a node of --num-processes ranks in a multi-node run (the EP tests' form): give --num-processes too, or use --ranks N`);
    }
    return { rest };
  }
  const perNode = intOption('num-processes', flags.get('num-processes')!);

  // srun / mpirun tasks that are ranks already (several per node): they must be what is asked for.
  const slurmTasks = env.SLURM_NTASKS !== undefined && env.SLURM_PROCID !== undefined && env.RANK === undefined ? Number(env.SLURM_NTASKS) : undefined;
  const slurmNodes = Number(env.SLURM_STEP_NUM_NODES ?? env.SLURM_NNODES ?? env.SLURM_JOB_NUM_NODES ?? 1);
  const mpiTasks = env.OMPI_COMM_WORLD_SIZE !== undefined && env.RANK === undefined ? Number(env.OMPI_COMM_WORLD_SIZE) : undefined;
  const perProcessTasks = mpiTasks ?? (slurmTasks !== undefined && slurmTasks !== slurmNodes ? slurmTasks : undefined);
  if (perProcessTasks !== undefined) {
    const nodesOfTasks = mpiTasks !== undefined ? Number(flags.get('world-size') ?? 1) : slurmNodes;
    if (perProcessTasks !== perNode * nodesOfTasks) {
      throw new BenchOptionError(
        `--num-processes ${perNode} asks for ${perNode} ranks per node x ${nodesOfTasks} node(s) = ${perNode * nodesOfTasks}, but the launcher started ${perProcessTasks} task(s) that are ranks themselves: ` +
          'start one task per node (the EP tests\' form) or drop --num-processes',
      );
    }
    return { rest, ranksAreTasks: true };
  }

  const slurmNodeLevel = slurmTasks !== undefined; // one srun task per node
  const num = (name: string, value: string | undefined, min: number) => (value === undefined ? undefined : intOption(name, value, min));
  const nodes = num('world-size', flags.get('world-size'), 1) ?? num('WORLD_SIZE (nodes)', env.WORLD_SIZE, 1) ?? (slurmNodeLevel ? slurmTasks : 1);
  const nodeRank = num('rank', flags.get('rank'), 0) ?? num('RANK (node rank)', env.RANK, 0) ?? (slurmNodeLevel ? Number(env.SLURM_PROCID) : 0);
  const firstNode = slurmNodeLevel ? slurmStepNodes(env)[0] : undefined;
  const masterAddr = flags.get('master-addr') ?? env.MASTER_ADDR ?? firstNode ?? '127.0.0.1';
  const masterPort = num('master-port', flags.get('master-port') ?? env.MASTER_PORT, 1);
  // The EP tests' own checks, in their words
  if (nodeRank >= nodes) throw new BenchOptionError(`RANK must be in [0, ${nodes - 1}], got ${nodeRank} (RANK / --rank is this node's rank among WORLD_SIZE / --world-size nodes)`);
  if (nodes > 1 && nodeRank > 0 && masterAddr === '127.0.0.1') {
    throw new BenchOptionError('MASTER_ADDR must be set (not 127.0.0.1) for worker nodes in multi-node setup. Set MASTER_ADDR environment variable or use --master-addr flag.');
  }
  const source = flags.has('world-size') || flags.has('rank') ? 'flags' : env.WORLD_SIZE !== undefined || env.RANK !== undefined ? 'WORLD_SIZE/RANK' : slurmNodeLevel ? 'srun (one task per node)' : 'one node';
  return { node: { nodes, nodeRank, ranksPerNode: perNode, masterAddr, masterPort, source }, rest };
}
