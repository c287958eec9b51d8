// The EP data plane: dispatch (token payloads to the experts' ranks), combine (processed tokens
// back), e2e (both), timed per iteration on every rank, iterations back to back after one barrier
// as NIXL EP's test runs them, each until the rank has both sent everything and received everything
// aimed at it. "Received everything" is known without a store round trip: after its data, every
// rank writes an 8-byte phase flag (the iteration number) to every rank's flag area, and each rank
// waits for its own. The bytes move GPU-initiated (one kernel per phase, as NIXL EP:
// ep-gpu-initiated.ts) or host-posted (ep-host-posted.ts). Besides the test's bandwidth (every
// (token, expert) message, self included), each rank reports the bytes it received from OTHER GPUs
// and their rate, as DeepEP counts NVLink bytes: what the link between GPUs has to carry.
import { XferEngine } from '../../engine.ts';
import type { MemoryKind } from '../../memory.ts';
import type { RankInfo } from '../../rank.ts';
import type { Store } from '../../store.ts';
import { checkHostFits } from '../common/memory-limit.ts';
import { mean, minAvgMax } from '../../../common/stats.ts';
import { crossGpuLines, dataPlaneBanner, dataPlaneResult, kernelProfileLine } from './ep-format.ts';
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
import type { EpIterationRunner, EpPhase as Phase, EpPhaseProfile, EpRegions as Regions } from './ep-iteration.ts';
import { GpuInitiatedRunner } from './ep-gpu-initiated.ts';
import { HostPostedRunner } from './ep-host-posted.ts';
import { beginTimed, verifying } from '../common/timed-regions.ts';

const TIMED_PHASES: Record<EpMode, Phase[]> = { dispatch: ['dispatch'], combine: ['combine'], e2e: ['dispatch', 'combine'] };

interface RankOutcome {
  bwGbps: number;
  latencyUs: number;
  /** Bytes received from other GPUs per iteration, and their rate over the mean time (GB/s). */
  crossBytes: number;
  crossGbps: number;
  /** GPU-initiated: where each phase's time went (the kernel's own stamps). */
  profile?: EpPhaseProfile[];
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
          dataPlaneBanner({ mode, ranks: info.worldSize, tokens: o.tokens, hidden: o.hidden, expertsPerRank, topk: o.topk, backend: o.backend, memory: kind, warmup: o.warmup, iters: o.iters, bytesPerRank, layout: o.layout, initiatedBy: runner.description, timing: runner.timing }),
        );
      }
      const outcome = await runMode(runner, store, layout, regions, o, mode, me);
      const all = await store.allGather<RankOutcome>(`ep-outcome-${mode}`, outcome);
      const passed = all.filter((r) => !r.failure).length;
      allPassed &&= passed === all.length;
      if (me === 0) {
        console.log(dataPlaneResult(mode, passed, all.length, minAvgMax(all.map((r) => r.bwGbps)), minAvgMax(all.map((r) => r.latencyUs))));
        console.log(crossGpuLines(minAvgMax(all.map((r) => r.crossBytes)), minAvgMax(all.map((r) => r.crossGbps)), kind === 'gpu' ? 'GPU' : 'rank'));
        for (const [i, phase] of TIMED_PHASES[mode].entries()) {
          const profiles = all.map((r) => r.profile?.[i]).filter((x): x is EpPhaseProfile => x !== undefined);
          if (profiles.length === all.length) console.log(kernelProfileLine(phase, minAvgMax(profiles.map((x) => x.dataUs)), minAvgMax(profiles.map((x) => x.waitUs))));
        }
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

/**
 * Bytes that cross between GPUs per iteration for rank `me`: what it sends to other ranks and what
 * it receives from them (dispatch: payloads of pairs whose expert lives elsewhere; combine: the
 * processed messages going back). DeepEP's intranode test reports received NVLink bytes.
 */
export function crossGpuBytes(layout: EpLayout, mode: EpMode, me: number): { sent: number; received: number } {
  const { shape } = layout;
  const away = Array.from(layout.routes[me]).filter((e) => expertRank(shape, e) !== me).length; // my pairs served elsewhere
  const fromOthers = layout.slots[me].filter((s) => s.source !== me).length; // pairs of others served here
  let sent = 0;
  let received = 0;
  for (const p of TIMED_PHASES[mode]) {
    const msg = p === 'dispatch' ? dispatchMessageBytes(shape.hidden) : combineMessageBytes(shape.hidden);
    sent += (p === 'dispatch' ? away : fromOthers) * msg;
    received += (p === 'dispatch' ? fromOthers : away) * msg;
  }
  return { sent, received };
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
  await runner.timed(phases, o.warmup);
  const endTimed = beginTimed(me, `ep ${mode} timed iterations`);
  const samplesUs = await runner.timed(phases, o.iters);
  endTimed();
  await store.barrier(`ep-timed-${mode}`); // no rank checks while another is still timing its last iteration
  failure ??= verifying(me, 'ep check', () => verify(layout, regions, expected, me, phases));
  const latencyUs = mean(samplesUs.slice(1)); // the first sample is dropped, as the reference does
  const crossBytes = crossGpuBytes(layout, mode, me).received;
  const seconds = latencyUs / 1e6;
  return { bwGbps: bytesPerIteration(layout, mode) / 1e9 / seconds, latencyUs, crossBytes, crossGbps: crossBytes / 1e9 / seconds, profile: runner.profile?.(), failure };
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
