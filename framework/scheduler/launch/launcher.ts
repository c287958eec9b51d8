// A launcher starts one step of a job inside the job's allocation: srun on SLURM, mpirun, flux run,
// or nothing at all (the command runs once, on the node the job script runs on). It is separate
// from the scheduler that queued the job: job builders describe each step in no launcher's words
// (a LaunchStep) and the launcher the run uses turns it into the words of a command line. A
// scheduler names its default launcher in its registration (registry.ts); a serving config may
// choose another (launch.launcher).
import type { Word } from '../../../runners/common/shell.ts';

/** The container a step's tasks run in (pyxis/enroot on SLURM). */
export interface StepContainer {
  image: string;
  /** Named, so that later steps reuse the container the first one started. */
  name: string;
  /** `src:dst[:flags]` pairs, comma-separated, as the config or the framework gives them. */
  mounts?: string;
}

/** Where and how one step runs, said once for every launcher. */
export interface LaunchStep {
  /** Nodes the step spans. */
  nodes: number;
  /** Tasks (processes) of the step in all. */
  tasks: number;
  /** Tasks on each of its nodes. */
  tasksPerNode: number;
  /**
   * Its nodes, named at run time: a script variable holding their names comma-separated. Absent:
   * the first `nodes` nodes of the allocation.
   */
  nodeList?: Word;
  /**
   * It runs beside other steps on resources they already hold (the servers, and the clients that
   * talk to them while they serve); else it expects the resources it asks for to itself.
   */
  sharesResources?: boolean;
  /** The process-management interface its tasks find each other through (pmix, pmi2); absent: none asked. */
  pmi?: string;
  /** One task failing ends every task of the step (the others would wait for it forever). */
  endsOnTaskFailure?: boolean;
  /** The container its tasks run in; absent: on the node itself. */
  container?: StepContainer;
}

/** A step with what it runs: the launch, then its environment, then its command. */
export interface CommandStep extends LaunchStep {
  /** `NAME=value` words set for the command only (run through `env`); empty: none. */
  env?: Word[];
  /** The command every task runs, one entry per word. */
  command: Word[];
}

export interface Launcher {
  /** What a config (launch.launcher) and a scheduler's registration call it. */
  readonly name: string;
  /** One line for docs and error messages. */
  readonly description: string;
  /**
   * It starts a step's tasks itself, so many on each of the step's nodes (srun, mpirun); false: it
   * runs the command once, and a step of several tasks cannot use it.
   */
  readonly startsTasks: boolean;
  /**
   * It runs a step's tasks inside the step's container. A launcher that cannot runs them on the
   * node itself, and the job starts no container.
   */
  readonly containers: boolean;
  /**
   * How each task it starts learns its rank and world size: the row of runners/common/
   * rank-variables.ts naming the variables it sets (slurm, openmpi, pmi, gridengine, flux...).
   * Absent: it starts one task, which is a world of one. Job scripts export it as
   * XFER_RANK_VARIABLES, which the engine's ranks read (runners/xfer/rank.ts).
   */
  readonly rankVariables?: string;
  /** The words that go before a step's command: `srun --nodes 2 ...`; none for a command run as it is. */
  prefix(step: LaunchStep): Word[];
}

/** The whole command line of a step under a launcher: its prefix, `env NAME=value...`, the command. */
export function launchWords(launcher: Launcher, step: CommandStep): Word[] {
  const env = step.env ?? [];
  return [...launcher.prefix(step), ...(env.length > 0 ? ['env', ...env] : []), ...step.command];
}
