// The EP data plane: dispatch (token payloads to the experts' ranks), combine (processed tokens
// back), e2e (both), timed per iteration on every rank from a common barrier until the rank has
// both sent everything and received everything aimed at it. "Received everything" is known without
// a store round trip: after its data, every rank writes an 8-byte phase flag (the iteration
// number) to every rank's flag area, and each rank waits for its own. The bytes move GPU-initiated
// (one kernel per phase, as NIXL EP: ep-gpu-initiated.ts) or host-posted (ep-host-posted.ts).
import { XferEngine } from '../../engine.ts';
import type { MemoryKind } from '../../memory.ts';
import type { RankInfo } from '../../rank.ts';
import type { Store } from '../../store.ts';
import { checkHostFits } from '../common/memory-limit.ts';
import { mean, minAvgMax } from '../common/stats.ts';
import { dataPlaneBanner, dataPlaneResult } from './ep-format.ts';
import type { EpMode, EpOptions } from './ep-options.ts';
import {
  combineRecvExpected,
  combineSendBytes,
  complement,
  dispatchRecvExpected,
  dispatchSendBytes,
  firstMessageMismatch,
} from './ep-payload.ts';
import { EP_REGIONS, combineMessageBytes, dispatchMessageBytes, epLayout, epRegionBytes, expertRank, sourceCombineIndex, type EpLayout } from './ep-routing.ts';
import type { EpIterationRunner, EpPhase as Phase, EpRegions as Regions } from './ep-iteration.ts';
import { GpuInitiatedRunner } from './ep-gpu-initiated.ts';
import { HostPostedRunner } from './ep-host-posted.ts';
import { beginTimed, verifying } from '../common/timed-regions.ts';

const TIMED_PHASES: Record<EpMode, Phase[]> = { dispatch: ['dispatch'], combine: ['combine'], e2e: ['dispatch', 'combine'] };

interface RankOutcome {
  bwGbps: number;
  latencyUs: number;
  failure?: string;
}

/** Runs every mode of `o` for one experts-per-rank value; true when every rank verified its data. */
export async function runDataPlane(info: RankInfo, store: Store, o: EpOptions, expertsPerRank: number): Promise<boolean> {
  const me = info.rank;
  const layout = epLayout({ ranks: info.worldSize, tokens: o.tokens, hidden: o.hidden, expertsPerRank, topk: o.topk, seed: o.seed }, o.layout);
  const sizes = epRegionBytes(layout, me);
  const engine = await XferEngine.create({ backend: o.backend, rank: info, store });
  try {
    const kind: MemoryKind = o.memory ?? engine.backend.memoryKinds[0];
    checkHostFits('the EP data-plane buffers', kind, Object.values(sizes).reduce((a, b) => a + b, 0), info.localWorldSize);
    const regions = {} as Regions;
    for (const key of Object.keys(EP_REGIONS) as (keyof typeof EP_REGIONS)[]) regions[key] = engine.allocate(EP_REGIONS[key], sizes[key], kind);
    regions.flags.fill(0);
    regions.dispatchSend.write(0, dispatchSendBytes(layout, me));
    regions.combineSend.write(0, combineSendBytes(layout, me));
    await engine.connect();
    const silent = o.testSilentRank === me;
    const runner: EpIterationRunner =
      o.initiatedBy === 'gpu' ? await GpuInitiatedRunner.create(engine, store, layout, silent) : await HostPostedRunner.create(engine, store, regions, layout, silent);
    let allPassed = true;
    for (const mode of o.modes) {
      if (me === 0) {
        const bytesPerRank = bytesPerIteration(layout, mode);
        console.log(
          dataPlaneBanner({ mode, ranks: info.worldSize, tokens: o.tokens, hidden: o.hidden, expertsPerRank, topk: o.topk, backend: o.backend, memory: kind, warmup: o.warmup, iters: o.iters, bytesPerRank, layout: o.layout, initiatedBy: runner.description }),
        );
      }
      const outcome = await runMode(runner, store, layout, regions, o, mode, me);
      const all = await store.allGather<RankOutcome>(`ep-outcome-${mode}`, outcome);
      const passed = all.filter((r) => !r.failure).length;
      allPassed &&= passed === all.length;
      if (me === 0) {
        console.log(dataPlaneResult(mode, passed, all.length, minAvgMax(all.map((r) => r.bwGbps)), minAvgMax(all.map((r) => r.latencyUs))));
        all.forEach((r, rank) => r.failure && console.log(`Rank ${rank} failed verification: ${r.failure}`));
      }
    }
    await engine.disconnect();
    await engine.destroy();
    return allPassed;
  } catch (err) {
    await engine.destroy().catch(() => {});
    throw err;
  }
}

/** Bytes one rank moves per iteration: per (token, selected expert), self included. */
export function bytesPerIteration(layout: EpLayout, mode: EpMode): number {
  const pairs = layout.shape.tokens * layout.shape.topk;
  return TIMED_PHASES[mode].reduce((a, p) => a + pairs * (p === 'dispatch' ? dispatchMessageBytes(layout.shape.hidden) : combineMessageBytes(layout.shape.hidden)), 0);
}

async function runMode(runner: EpIterationRunner, store: Store, layout: EpLayout, regions: Regions, o: EpOptions, mode: EpMode, me: number): Promise<RankOutcome> {
  const expected = { dispatch: dispatchRecvExpected(layout, me), combine: combineRecvExpected(layout, me) };
  verifying(me, 'ep poison', () => {
    regions.dispatchRecv.write(0, complement(expected.dispatch));
    regions.combineRecv.write(0, complement(expected.combine));
  });
  // The verified run: a combine needs a dispatch before it ("one dispatch, many combines").
  await runner.iteration(mode === 'dispatch' ? ['dispatch'] : ['dispatch', 'combine']);
  if (o.testCorruptRank === me) {
    const target = layout.slots[me].length > 0 ? regions.dispatchRecv : regions.combineRecv;
    target.write(0, Uint8Array.of(target.read(0, 1)[0] ^ 0x01));
  }
  let failure = verifying(me, 'ep check', () => verify(layout, regions, expected, me, mode === 'dispatch' ? ['dispatch'] : ['dispatch', 'combine']));
  const phases = TIMED_PHASES[mode];
  for (let i = 0; i < o.warmup; i++) await runner.iteration(phases);
  const samplesUs: number[] = [];
  const endTimed = beginTimed(me, `ep ${mode} timed iterations`);
  for (let i = 0; i < o.iters; i++) samplesUs.push(await runner.iteration(phases));
  endTimed();
  await store.barrier(`ep-timed-${mode}`); // no rank checks while another is still timing its last iteration
  failure ??= verifying(me, 'ep check', () => verify(layout, regions, expected, me, phases));
  const latencyUs = mean(samplesUs.slice(1)); // the first sample is dropped, as the reference does
  return { bwGbps: bytesPerIteration(layout, mode) / 1e9 / (latencyUs / 1e6), latencyUs, failure };
}

function verify(layout: EpLayout, regions: Regions, expected: Record<Phase, Buffer>, me: number, phases: Phase[]): string | undefined {
  const { shape } = layout;
  for (const phase of phases) {
    const region = phase === 'dispatch' ? regions.dispatchRecv : regions.combineRecv;
    const msg = phase === 'dispatch' ? dispatchMessageBytes(shape.hidden) : combineMessageBytes(shape.hidden);
    const m = firstMessageMismatch(expected[phase], region.read(0, expected[phase].length), msg);
    if (!m) continue;
    const hex = (b: number) => `0x${b.toString(16).padStart(2, '0')}`;
    const bytes = `byte ${m.byte}: expected ${hex(m.expected)}, got ${hex(m.got)}`;
    if (phase === 'dispatch') {
      const slot = layout.slots[me][m.message];
      const expert = layout.routes[slot.source][slot.pair];
      return `dispatch: slot ${m.message} (token ${Math.floor(slot.pair / shape.topk)} of rank ${slot.source} for expert ${expert}), ${bytes}`;
    }
    const pair = Array.from(layout.routes[me].keys()).find((p) => sourceCombineIndex(layout, me, p) === m.message) ?? m.message;
    const expert = layout.routes[me][pair];
    return `combine: token ${Math.floor(pair / shape.topk)} k=${pair % shape.topk} (from expert ${expert} on rank ${expertRank(shape, expert)}), ${bytes}`;
  }
  return undefined;
}
