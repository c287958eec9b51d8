// What every `disagg-bench` command exits with: the one table (runners/common/exit-codes.ts, by
// the error's category), and here what a command imitating an upstream tool exits with instead
// (errors are raised where the fault is found; what a process reports for them is the CLI's business):
//   0   done
//   1   the command ran and failed (a test, a regression, an unreadable file...)
//   2   a usage error: an unknown option, a missing argument, a bad value (UsageError), or a bad
//       setting in the environment (SettingsError), as a run refuses it before it starts
//   3   a `history` command that could not do its work (commands/history.ts EXIT_HISTORY_FAILED)
//   4   `history bisect` could not tell within its budget (inconclusive: its answer says what would decide it)
//   75  a transfer rank that stopped because another rank died (the engine's PEER_DIED_EXIT_CODE,
//       which the rank launchers read to name the rank that failed on its own)
// A command that imitates an upstream tool exits as that tool does, where it differs: `sweep`
// reads nixlbench's flags, and gflags exits 1 on a flag it does not know. kvbench's click
// (ct-perftest, sequential-ct-perftest, matgen) and benchmark_serving's argparse (serve-bench)
// exit 2 on a usage error, as every other command here does.
import { UsageError } from '../../../runners/common/errors.ts';
import { EXIT_USAGE, exitCodeOfError } from '../../../runners/common/exit-codes.ts';

export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../../../runners/common/exit-codes.ts';
/** `history bisect`: neither a first bad candidate nor "nothing to search" within the budget. */
export const EXIT_INCONCLUSIVE = 4;

/** Commands whose usage errors exit as their upstream tool's do, with that tool named for the docs. */
export const UPSTREAM_USAGE_EXIT: Readonly<Record<string, { code: number; tool: string }>> = {
  sweep: { code: 1, tool: "nixlbench (gflags exits 1 on an unknown or malformed flag)" },
};

/** The usage-error exit code of `command`. */
export function usageExitCode(command: string): number {
  return UPSTREAM_USAGE_EXIT[command]?.code ?? EXIT_USAGE;
}

/** The exit code of `command` ending with `err`. */
export function exitCodeFor(command: string, err: unknown): number {
  if (err instanceof UsageError) return usageExitCode(command);
  return exitCodeOfError(err);
}
