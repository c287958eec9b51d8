// `disagg-bench ep`: the NIXL EP perf tests (seed 001) on the transfer engine. Data plane
// (dispatch | combine | e2e, verified) and control plane (init, connect, disconnect, reconnect,
// destroy), for one or more experts-per-rank values.
//   disagg-bench ep --ranks 4 --mode dispatch,combine,e2e --control-plane --experts-per-rank 8,32
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import { openStore } from '../../store.ts';
import { runAsRanks } from '../common/rank-launch.ts';
import { takeUcxFlags, ucxFlagsUsage } from '../common/ucx-flags.ts';
import { runControlPlane } from './ep-control-plane.ts';
import { runDataPlane } from './ep-data-plane.ts';
import { parseEpArgs, type EpOptions } from './ep-options.ts';

export const epUsage = `usage: disagg-bench ep [--ranks N | --num-processes N] [options]
  --mode dispatch|combine|e2e (or a list: dispatch,combine,e2e; default e2e unless --control-plane)
  --control-plane  [--test init|connect|disconnect|reconnect|destroy]
  --tokens 512 --hidden 4096 --experts-per-rank 8 (or a list: 8,32) --topk 2 --warmup 10 --iters 100 --seed 1
  --layout packed|per-message (packed: one transfer per peer; per-message: one per (token, expert))
  --backend shm|ucx|cuda|nccl (or --nvlink-backend ipc|none) --memory host|gpu
  --initiated-by gpu|host  gpu: one kernel launch per phase, as NIXL EP (cuda only; its default);
                   host: the host-posted emulation (engine transfers, then flag writes; other backends)
  ${ucxFlagsUsage}
Bytes per (token, selected expert), self included: dispatch hidden + hidden/128*4 + 16, combine hidden*2.
BW = bytes / 1e9 / mean time, latency = mean time (first sample dropped), avg/min/max across ranks.
Ranks: srun/torchrun/mpirun tasks, else --ranks N started here (default 8).`;

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(epUsage);
    return 0;
  }
  return runAsRanks({ command: 'ep', argv: takeUcxFlags(argv), defaultRanks: 8 }, async (rest) => runEpRank(parseEpArgs(rest)));
}

export async function runEpRank(o: EpOptions, info: RankInfo = rankFromEnv()): Promise<number> {
  const store = await openStore(info);
  try {
    let passed = true;
    for (const expertsPerRank of o.expertsPerRank) {
      if (o.modes.length > 0) passed = (await runDataPlane(info, store, o, expertsPerRank)) && passed;
      if (o.controlPlane) await runControlPlane(info, store, o, expertsPerRank);
    }
    await store.close();
    return passed ? 0 : 1;
  } catch (err) {
    await store.close(5_000).catch(() => {});
    throw new Error(`rank ${info.rank}: ${(err as Error).message}`, { cause: err });
  }
}
