// `disagg-bench ep`: the NIXL EP perf tests on the transfer engine. Data plane
// (dispatch | combine | e2e, verified) and control plane (init, connect, disconnect, reconnect,
// destroy), for one or more experts-per-rank values.
//   disagg-bench ep --ranks 4 --mode dispatch,combine,e2e --control-plane --experts-per-rank 8,32
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import { openStore } from '../../store.ts';
import { runAsRanks, takeRanksOption } from '../common/rank-launch.ts';
import { takeUcxFlags, ucxFlagsUsage } from '../common/ucx-flags.ts';
import { runControlPlane } from './ep-control-plane.ts';
import { runDataPlane } from './ep-data-plane.ts';
import { expandEpAbbreviations, parseEpArgs, type EpOptions } from './ep-options.ts';
import { epNodeWorld, type EpNodeWorld } from './ep-nodes.ts';
import { XferError } from '../../errors.ts';

export const usage = `usage: disagg-bench ep [--ranks N | --num-processes P [--world-size NODES --rank NODE --master-addr A --master-port P]] [options]
  --mode dispatch|combine|e2e (or a list: dispatch,combine,e2e; default e2e unless --control-plane)
  --control-plane  [--test init|connect|disconnect|destroy|cycle] [--warmup 0 --rounds 1] (rounds of the control plane; reconnect is in the cycle)
  --tokens 512 --hidden 4096 --experts-per-rank N[,N...] (default: data plane 8, control plane 8,32, the tests' defaults)
  --topk 2 --warmup 10 --iters 100 --seed N (random; default 1)  --num-tokens N (the control-plane test's name for --tokens)
  --timeout 300 (seconds every wait of the rendezvous store may take)
  --use-tcp-store, --skip-nic-discovery (the tests' flags: announced, the engine does this already)
  --use-etcd, --discover-nics (refused with the reason)
  --test-corrupt-rank R, --test-silent-rank R (test hooks: rank R flips a received byte / moves nothing)
  --layout packed|per-message (packed: one transfer per peer; per-message: one per (token, expert))
  --backend shm|ucx|cuda|nccl|libfabric (or --nvlink-backend ipc|none) --memory host|gpu
  --initiated-by gpu|host  gpu: one kernel launch per phase, as NIXL EP (cuda only; its default);
                   host: the host-posted emulation (engine transfers, then flag writes; other backends)
  ${ucxFlagsUsage}
Bytes per (token, selected expert), self included: dispatch hidden + hidden/128*4 + 16, combine hidden*2.
BW = bytes / 1e9 / mean time, latency = mean time (first sample dropped), avg/min/max across ranks.
Ranks: srun/torchrun/mpirun tasks, else --ranks N started here (default 8).
An option may be shortened to a prefix no other option shares (--rou 3, --nvlink ipc), as the tests' argparse takes it.`;

export async function run(argv: string[]): Promise<number> {
  // ucx flags: into the ranks' environment (the ranks' command line has none)
  const args = expandEpAbbreviations(takeUcxFlags(argv));
  const { node, rest, ranksAreTasks } = epNodeWorld(args);
  if (ranksAreTasks) return runEpRank(parseEpArgs(rest));
  if (node) {
    parseEpArgs(rest); // bad options fail here, once, not in every rank
    return runEpNode(node, rest);
  }
  parseEpArgs(takeRanksOption(rest, ['--ranks', '--num-processes']).rest); // bad options fail here, once, before any rank starts
  return runAsRanks({ command: 'ep', argv: args, defaultRanks: 8 }, async (ranksArgv) => runEpRank(parseEpArgs(ranksArgv)));
}

/** One node of the EP tests' multi-node form: starts this node's --num-processes ranks of nodes x P. */
async function runEpNode(node: EpNodeWorld, rest: string[]): Promise<number> {
  const worldSize = node.nodes * node.ranksPerNode;
  const firstRank = node.nodeRank * node.ranksPerNode;
  if (node.nodes > 1) {
    console.log(
      [
        `Multi-node setup (${node.source}):`,
        `  Nodes (WORLD_SIZE): ${node.nodes}`,
        `  This node (RANK): ${node.nodeRank} ${node.nodeRank === 0 ? '(master)' : '(worker)'}`,
        `  Processes per node: ${node.ranksPerNode}`,
        `  Total ranks: ${worldSize}`,
        `  Master address: ${node.masterAddr}`,
      ].join('\n'),
    );
  } else {
    console.log(`Single-node setup: ${node.ranksPerNode} processes`);
  }
  const job = `ep-nodes:${node.masterAddr}:${node.masterPort ?? ''}:${node.nodes}x${node.ranksPerNode}`;
  return runAsRanks(
    { command: 'ep', argv: rest, defaultRanks: node.ranksPerNode, node: { worldSize, firstRank, ranksPerNode: node.ranksPerNode, host: node.masterAddr, port: node.masterPort, job } },
    async () => 1, // never: a node always starts its ranks
  );
}

export async function runEpRank(o: EpOptions, info: RankInfo = rankFromEnv()): Promise<number> {
  if (o.timeoutS !== undefined) process.env.XFER_TIMEOUT_S = String(o.timeoutS); // --timeout: every wait of the store
  if (info.rank === 0) o.notes.forEach((note) => console.log(note));
  const store = await openStore(info);
  try {
    let passed = true;
    // each test's own expert counts: the data plane's 8, the control plane's 8 and 32 (unless --experts-per-rank)
    if (o.modes.length > 0) for (const expertsPerRank of o.expertsPerRank) passed = (await runDataPlane(info, store, o, expertsPerRank)) && passed;
    if (o.controlPlane) for (const expertsPerRank of o.cpExpertsPerRank) await runControlPlane(info, store, o, expertsPerRank);
    await store.close();
    return passed ? 0 : 1;
  } catch (err) {
    await store.closeAfterFailure();
    throw new XferError(`rank ${info.rank}: ${(err as Error).message}`, {}, { cause: err });
  }
}
