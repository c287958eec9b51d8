// The EP control plane: init (engine and buffers sized by the experts per rank), connect,
// disconnect, reconnect (connect again after a disconnect) and destroy, each after a barrier so
// every rank starts it together, in --warmup + --rounds rounds (the tests' defaults 0 and 1). Rank
// 0 prints what test_control_plane.py prints: for the whole cycle the seed's table (the first
// rank's avg/min/max over the measured rounds) and, not the test's, the spread across ranks of each
// rank's mean; for --test <op> the test's one line, each rank's mean over the rounds averaged
// across the ranks, with their min and max (log_single_op_results).
import { monoNs } from '../../clock.ts';
import { XferEngine } from '../../engine.ts';
import type { MemoryKind } from '../../memory.ts';
import type { RankInfo } from '../../rank.ts';
import type { Store } from '../../store.ts';
import { checkHostFits } from '../common/memory-limit.ts';
import { minAvgMax, type MinAvgMax } from '../../../common/stats.ts';
import { controlPlaneTable, singleOperationLine } from './ep-format.ts';
import { controlOperations, type ControlOperation, type EpOptions } from './ep-options.ts';
import { combineMessageBytes, dispatchMessageBytes } from './ep-routing.ts';

/**
 * Buffers an EP buffer of this many experts registers, sized for the worst case as the
 * low-latency kernels do: any source's tokens may all pick any local expert.
 */
export function controlPlaneBufferBytes(o: Pick<EpOptions, 'tokens' | 'hidden' | 'topk'>, ranks: number, expertsPerRank: number): Record<string, number> {
  const messages = expertsPerRank * ranks * o.tokens;
  return {
    'ep-cp-dispatch-send': o.tokens * dispatchMessageBytes(o.hidden),
    'ep-cp-dispatch-recv': messages * dispatchMessageBytes(o.hidden),
    'ep-cp-combine-send': messages * combineMessageBytes(o.hidden),
    'ep-cp-combine-recv': o.tokens * o.topk * combineMessageBytes(o.hidden),
  };
}

/** Operations that run for `--test=op` (its prerequisites and destroy), or all. */
export function operationsToRun(test?: ControlOperation): ControlOperation[] {
  if (!test) return [...controlOperations];
  const needs: Record<ControlOperation, ControlOperation[]> = {
    init: ['init', 'destroy'],
    connect: ['init', 'connect', 'destroy'],
    disconnect: ['init', 'connect', 'disconnect', 'destroy'],
    reconnect: ['init', 'connect', 'disconnect', 'reconnect', 'destroy'],
    destroy: ['init', 'connect', 'destroy'],
  };
  return needs[test];
}

export async function runControlPlane(info: RankInfo, store: Store, o: EpOptions, expertsPerRank: number): Promise<void> {
  const sizes = controlPlaneBufferBytes(o, info.worldSize, expertsPerRank);
  const ops = operationsToRun(o.test);
  // One list of milliseconds per operation, one entry per measured round (warm-up rounds dropped).
  const samples = Object.fromEntries(ops.map((op) => [op, [] as number[]])) as Record<ControlOperation, number[]>;
  for (let round = 0; round < o.cpWarmup + o.rounds; round++) {
    const times = await controlPlaneRound(info, store, o, sizes, ops, `${expertsPerRank}-${round}`);
    if (round >= o.cpWarmup) for (const op of ops) samples[op].push(times[op]!);
  }
  const all = await store.allGather(`ep-cp-times-${expertsPerRank}`, samples);
  if (info.rank !== 0) return;
  // the rounds that actually ran, as counted by their samples
  const measured = samples[ops[0]].length;
  const acrossRanks = (operation: ControlOperation) => minAvgMax(all.map((s) => minAvgMax(s[operation]).avg));
  if (o.test) {
    // --test <op>: the test's log_single_op_results, each rank's mean over the rounds, then avg/min/max across ranks
    console.log(`Warmup: ${o.cpWarmup}, Measure: ${measured} rounds (each rank's mean over the rounds, then across ranks)`);
    console.log(singleOperationLine(o.test, acrossRanks(o.test), all.length, expertsPerRank));
    return;
  }
  // the cycle: the test's log_cycle_results, rank 0's avg/min/max over the rounds; then (not the test's) across ranks
  console.log(`Warmup: ${o.cpWarmup}, Measure: ${measured} rounds (avg/min/max over the rounds, rank 0)`);
  console.log(controlPlaneTable(expertsPerRank, info.worldSize, ops.map((operation) => ({ operation, ms: minAvgMax(samples[operation]) }))));
  console.log(acrossRanksLine(ops.map((operation) => ({ operation, ms: acrossRanks(operation) }))));
}

/** One round: init, connect, disconnect, reconnect, destroy (or what --test needs), each after a barrier. */
async function controlPlaneRound(
  info: RankInfo,
  store: Store,
  o: EpOptions,
  sizes: Record<string, number>,
  ops: ControlOperation[],
  tag: string,
): Promise<Partial<Record<ControlOperation, number>>> {
  const times: Partial<Record<ControlOperation, number>> = {};
  let engine: XferEngine | undefined;
  try {
    for (const op of ops) {
      await store.barrier(`ep-cp-${tag}-${op}`);
      if (op === 'init') {
        const t0 = monoNs();
        engine = await XferEngine.create({ backend: o.backend, rank: info, store });
        const kind: MemoryKind = o.memory ?? engine.backend.memoryKinds[0];
        checkHostFits('the EP control-plane buffers', kind, Object.values(sizes).reduce((a, b) => a + b, 0), info.localWorldSize);
        for (const [name, bytes] of Object.entries(sizes)) engine.allocate(name, Math.max(1, bytes), kind);
        times.init = (monoNs() - t0) / 1e6;
        continue;
      }
      const e = engine!;
      if (op === 'connect' || op === 'reconnect') await e.connect();
      if (op === 'disconnect') await e.disconnect();
      if (op === 'destroy') await e.destroy();
      // the engine's own control-plane clock; a reconnect is its second connect
      const phase = op === 'reconnect' ? 'connect' : op;
      times[op] = e.controlTimes[phase].at(-1);
    }
  } catch (err) {
    await engine?.destroy().catch(() => {});
    throw err;
  }
  return times;
}

/** Each rank's mean over the rounds, then min/avg/max across ranks (not in the tests' table). */
function acrossRanksLine(rows: { operation: ControlOperation; ms: MinAvgMax }[]): string {
  return `Across ranks (each rank's mean over the rounds, ms): ${rows.map((r) => `${r.operation} avg=${r.ms.avg.toFixed(2)} min=${r.ms.min.toFixed(2)} max=${r.ms.max.toFixed(2)}`).join('; ')}`;
}
