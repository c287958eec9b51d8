// How a bench command becomes ranks: under a launcher (srun, torchrun's variables, mpirun) this
// process IS one rank; on its own, `--ranks N` (or the bench's default) starts N ranks here, each
// re-running the same `disagg-bench <command>` with the launcher's variables set.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeEntryArgv, spawnLocalRanks, type NodeOfWorld } from '../../local-launch.ts';
import { rankFromEnv } from '../../rank.ts';
import { takeOptions } from '../../../common/args/take-options.ts';
import { UsageError } from '../../../common/errors.ts';

/** bin/disagg-bench.js of this package: what every local rank runs. */
export const disaggBenchBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../bin/disagg-bench.js');

export interface RanksRequest {
  /** The disagg-bench subcommand (e.g. 'sweep'), re-run by every local rank. */
  command: string;
  /** Its arguments, `--ranks N` included or not. */
  argv: string[];
  /** Ranks started when neither a launcher nor --ranks says otherwise. */
  defaultRanks: number;
  /** Extra environment of every local rank. */
  env?: Record<string, string>;
  /** This process starts one node's ranks of a world of `worldSize` (the EP tests' --num-processes per node). */
  node?: NodeOfWorld & { worldSize: number };
}

/** Splits `--ranks N` / `--ranks=N` (also `--num-processes`, the EP tests' name) out of argv. */
export function takeRanksOption(argv: string[], names = ['--ranks']): { ranks?: number; rest: string[] } {
  const { taken, rest } = takeOptions(argv, names);
  let ranks: number | undefined;
  for (const { name, value } of taken) {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} takes a whole number of ranks >= 1, got '${value ?? ''}'`);
    ranks = n;
  }
  return { ranks, rest };
}

/**
 * Runs `rankMain` as this process's rank when a launcher started it; otherwise starts the ranks
 * here (rank 0's stdout unprefixed, so tables read as the tools print them; other lines
 * prefixed `[rank k]`) and returns the first failed rank's exit code, or 0.
 */
export async function runAsRanks(request: RanksRequest, rankMain: (argv: string[]) => Promise<number>): Promise<number> {
  const { ranks, rest } = takeRanksOption(request.argv, ['--ranks', '--num-processes']);
  const { node } = request;
  const launched = rankFromEnv().launcher !== 'single';
  if (!node && (launched || ranks === 1 || (ranks === undefined && request.defaultRanks === 1))) return rankMain(rest);
  const world = node?.worldSize ?? ranks ?? request.defaultRanks;
  const result = await spawnLocalRanks(world, nodeEntryArgv(disaggBenchBin, [request.command, ...rest]), {
    env: request.env,
    node,
    onLine: (rank, stream, line) => {
      const out = stream === 'stdout' ? process.stdout : process.stderr;
      out.write(rank === 0 && stream === 'stdout' ? `${line}\n` : `[rank ${rank}] ${line}\n`);
    },
  });
  if (result.ok) return 0;
  const first = result.firstFailure ?? result.exits.find((e) => e.code !== 0)!;
  console.error(`${request.command}: rank ${first.rank} failed (${first.signal ?? `exit code ${first.code}`})`);
  return first.code || 1;
}
