// Sequential CT perftest: a list of traffic patterns, e.g. matgen's metadata.yaml.
// 1. prepare every pattern once (buffers, plans); 2. warm-up; 3. isolated phase: each pattern
// alone (a global barrier between patterns), timed runs; 4. workload phase, per iteration: a global
// barrier, then every rank walks the patterns in order, skipping those it takes no part in; per
// pattern: a barrier of the pattern's initiators only (kvbench's `_barrier_tp`: the senders, who
// start its transfers; receivers of a WRITE are not waited for, so a rank still sleeping after
// one pattern holds up no other pattern's senders), the run, and the senders sleep
// sleep_after_launch_sec. sleep_before_launch_sec is not slept by default: kvbench's main.py builds
// its TrafficPatterns without it, so kvbench never sleeps before a pattern. --sleep-before-launch
// sleeps it (the senders' simulated prefill compute, after the barrier) and, for READ, adds a
// barrier of the pattern's ranks after it (the receivers, who initiate a READ, must not pull
// before the senders' compute is done). Sleeps are scaled by --sleep-scale. Receivers do not sleep.
// Ranks can be on different patterns at once: that overlap is the congestion the test measures.
//   disagg-bench sequential-ct-perftest out/metadata.yaml --ranks 16 --backend shm --sleep-scale 0.001
import { monoNs, sleep } from '../clock.ts';
import type { WaitOptions } from '../store.ts';
import type { RankInfo } from '../rank.ts';
import type { Plan } from '../engine.ts';
import { readSequentialConfig, type TrafficPattern } from './traffic-pattern.ts';
import { checkBuffersFit, describeReceived, layoutBuffers, patternRanks, patternRequests, prepareVerification, regionName, verifyReceived } from './pattern-buffers.ts';
import { formatSequentialReport, sequentialReport, type SequentialReport, type Span } from './sequential-report.ts';
import { defaultBackend, printNotes, reportingBenchMain, runAsRank, writeJsonReport } from './bench-rank.ts';
import { BenchOptionError, intOption, numberOption } from './common/options.ts';
import { ctArgSpec, ctBackendOptions, parseCtArgs, type CtCommonOptions } from './ct-options.ts';
import type { OptionSpec } from '../../common/args/read-args.ts';
import { ucxFlagsUsage } from './common/ucx-flags.ts';
import { RunningStats } from '../../common/stats.ts';
import { beginTimed, verifying } from './common/timed-regions.ts';

export interface SequentialOptions extends CtCommonOptions {
  /** Multiplies sleep_before/after_launch_sec (0.001: a 2 s compute time sleeps 2 ms). Default 1. */
  sleepScale: number;
  isolationIters: number;
  warmupIters: number;
  workloadIters: number;
  /** All patterns in one window of the buffers (memory of the largest, not the sum); no verification. */
  shareBuffers: boolean;
  /** Sleep sleep_before_launch_sec before each pattern (kvbench never does: off by default). */
  sleepBeforeLaunch: boolean;
}

export const sequentialUsage =
  'usage: disagg-bench sequential-ct-perftest CONFIG [--verify-buffers|--no-verify-buffers] [--print-recv-buffers|--no-print-recv-buffers] ' +
  '[--json-output-path P] [--sleep-scale 1] [--isolation-iters 30] [--warmup-iters 30] [--workload-iters 3] ' +
  '[--backend shm|ucx|cuda|nccl|libfabric] [--cuda-copy auto|copy-engine|kernel] [--ranks N] [--share-buffers] [--sleep-before-launch]\n' +
  '  --sleep-before-launch: the senders sleep each pattern\'s sleep_before_launch_sec before it (kvbench never does)\n' +
  `  ${ucxFlagsUsage}`;

/** The options beyond the CT perftest's (ct-options.ts). */
const SEQUENTIAL_OPTIONS: OptionSpec = {
  'sleep-scale': { type: 'string' },
  'isolation-iters': { type: 'string' },
  'warmup-iters': { type: 'string' },
  'workload-iters': { type: 'string' },
  'share-buffers': { type: 'boolean', default: false },
  'sleep-before-launch': { type: 'boolean', default: false },
};

/** For --help (framework/cli.ts): click's words, where a value may look like an option. */
export const sequentialArgSpec = ctArgSpec(SEQUENTIAL_OPTIONS);

/** The options of one rank (--ranks is the launcher's, see common/rank-launch.ts). */
export function parseSequentialArgs(argv: string[]): SequentialOptions {
  const { common, values } = parseCtArgs(argv, sequentialUsage, SEQUENTIAL_OPTIONS);
  const shareBuffers = values['share-buffers'] === true;
  if (shareBuffers && common.verifyBuffers) {
    throw new BenchOptionError('--share-buffers puts every pattern in the same window, so the bytes cannot be verified: drop one of --share-buffers, --verify-buffers');
  }
  const int = (name: 'isolation-iters' | 'warmup-iters' | 'workload-iters', fallback: number, min: number) =>
    values[name] === undefined ? fallback : intOption(name, values[name] as string, min);
  return {
    ...common,
    sleepScale: values['sleep-scale'] === undefined ? 1 : numberOption('sleep-scale', values['sleep-scale'] as string, 0),
    isolationIters: int('isolation-iters', 30, 1),
    warmupIters: int('warmup-iters', 30, 0),
    workloadIters: int('workload-iters', 3, 1),
    shareBuffers,
    sleepBeforeLaunch: values['sleep-before-launch'] === true,
  };
}

/** `disagg-bench sequential-ct-perftest`: one rank under a launcher, or starts --ranks N here. */
export function sequentialCtPerftestMain(argv: string[]): Promise<number> {
  return reportingBenchMain(argv, { command: 'sequential-ct-perftest', parse: parseSequentialArgs, readConfig: readSequentialConfig, run: runSequentialCtPerftest, format: formatSequentialReport });
}

/** One rank's part; rank 0 returns the report. */
export async function runSequentialCtPerftest(info: RankInfo, o: SequentialOptions): Promise<SequentialReport | undefined> {
  const patterns = readSequentialConfig(o.configFile, info.worldSize);
  const notes = [...patterns.flatMap((p) => p.notes), ...sleepBeforeNotes(patterns, o.sleepBeforeLaunch)];
  printNotes(info, notes);
  const kinds = [...new Set(patterns.map((p) => p.memory))];
  const backend = o.backend ?? defaultBackend(kinds);
  const me = info.rank;
  const everyone = Array.from({ length: info.worldSize }, (_, r) => r);
  const layout = layoutBuffers(patterns, o.shareBuffers);
  // Before the store opens or anything is allocated (every pattern's window, or the largest with --share-buffers).
  checkBuffersFit(`the sequential CT perftest (${patterns.length} pattern(s)${o.shareBuffers ? ', shared buffers' : ''})`, layout, info.worldSize, info.localWorldSize);
  return runAsRank(info, backend, kinds, async (engine, store) => {
    const epochOffsetNs = Date.now() * 1e6 - monoNs();
    const startNs = monoNs();
    for (const kind of layout.kinds) {
      for (const side of ['send', 'recv'] as const) engine.allocate(regionName(kind, side), layout.regionSize(kind, side, me), kind);
    }
    await engine.connect();
    // Every rank prepares every pattern, in order (two-sided backends prepare collectively).
    const plans: Plan[] = [];
    for (const p of patterns) plans.push(await engine.prepare(patternRequests(p, layout, me), everyone));
    await store.barrier('seq-prepared');
    const preparedNs = monoNs();

    const roles = patterns.map(patternRanks);
    const mine = patterns.filter((p) => roles[p.index].members.includes(me));
    const initiates = (p: TrafficPattern) => roles[p.index].initiators.includes(me);
    // Who runs a pattern: its initiators, its senders (for their sleeps) and, on a two-sided
    // backend (nccl), every member, whose runs are collective. A receiver of a one-sided WRITE
    // takes no part, as in kvbench (which skips every rank that is not a sender).
    const twoSided = engine.backend.twoSided;
    const takesPart = (p: TrafficPattern) => initiates(p) || roles[p.index].senders.includes(me) || (twoSided && roles[p.index].members.includes(me));
    const runs = patterns.filter(takesPart);
    // kvbench's _barrier_tp: the ranks that start the pattern's transfers wait for each other, no one else.
    const patternBarrier = async (p: TrafficPattern, barrier: string, options: WaitOptions = {}) => {
      if (initiates(p)) await store.barrier(barrier, { ranks: roles[p.index].initiators, ...options });
    };
    const runAfterBarrier = async (p: TrafficPattern, barrier: string) => {
      await patternBarrier(p, barrier);
      return engine.execute(plans[p.index]);
    };
    const tag = (phase: number, p: TrafficPattern) => phase * patterns.length + p.index;
    // Verification (fill and poison before a phase, check after it) is never inside a timed region:
    // the check waits until every rank's transfers of the phase are complete.
    const prepareAll = (phase: number) => {
      if (!o.verifyBuffers) return;
      verifying(me, 'sequential fill/poison', () => {
        for (const p of mine) prepareVerification(p, layout, engine.regions, me, tag(phase, p));
      });
    };
    const verifyAll = async (phase: number, barrier: string, timeoutMs?: number) => {
      if (!o.verifyBuffers) return;
      await store.barrier(barrier, { timeoutMs }); // every rank's transfers of the phase are complete
      verifying(me, 'sequential check', () => {
        for (const p of mine) verifyReceived(p, layout, engine.regions, me, tag(phase, p));
      });
    };

    for (const p of runs) for (let k = 0; k < o.warmupIters; k++) await runAfterBarrier(p, `seq-warmup-${p.index}`);
    if (o.verifyBuffers) await store.barrier('seq-warmup-done');

    prepareAll(0);
    const isolationStartNs = monoNs(); // kvbench's sol_calculation_ts
    const isolationMeanNs: (number | null)[] = [];
    for (const p of patterns) {
      await store.barrier('seq-isolation'); // the pattern runs alone
      const durations = new RunningStats(); // constant memory, however many isolation iterations
      if (takesPart(p)) {
        const endTimed = beginTimed(me, `sequential isolated pattern ${p.index}`);
        for (let k = 0; k < o.isolationIters; k++) {
          const r = await runAfterBarrier(p, `seq-isolated-${p.index}`);
          durations.add(r.endNs - r.startNs);
        }
        endTimed();
      }
      isolationMeanNs.push(initiates(p) ? durations.mean : null);
    }
    await verifyAll(0, 'seq-isolation-done');
    const iterations: { startNs: number; spans: Span[][] }[] = [];
    const bytes = await store.allGather<number[]>('seq-bytes', plans.map((plan) => plan.prepared.bytes));
    const isolation = await store.allGather<(number | null)[]>('seq-isolation-means', isolationMeanNs);
    const settings = {
      backend,
      ranks: info.worldSize,
      sleep_scale: o.sleepScale,
      warmup_iters: o.warmupIters,
      isolation_iters: o.isolationIters,
      workload_iters: o.workloadIters,
      verified_buffers: o.verifyBuffers,
      shared_buffers: o.shareBuffers,
      sleep_before_launch: o.sleepBeforeLaunch,
    };
    const reportSoFar = (partial: boolean) =>
      sequentialReport({
        patterns, bytes, isolationMeanNs: isolation, iterations, startNs, preparedNs, isolationStartNs, finishedNs: monoNs(), epochOffsetNs,
        // A report written while the run goes on says so: a crash keeps the iterations done.
        settings: partial ? { ...settings, partial: true, completed_workload_iters: iterations.length } : settings,
        notes,
      });

    // A rank may wait in the workload phase for others' sleeps: waits get them on top of the usual limit.
    const sleepBeforeSec = (p: TrafficPattern) => (o.sleepBeforeLaunch ? p.sleepBeforeSec : 0);
    const sleepsMs = patterns.reduce((sum, p) => sum + (sleepBeforeSec(p) + p.sleepAfterSec) * o.sleepScale * 1000, 0);
    const waits = { timeoutMs: store.defaultTimeoutMs + sleepsMs };
    for (let w = 0; w < o.workloadIters; w++) {
      prepareAll(w + 1);
      await store.barrier('seq-workload', waits);
      const iterationStartNs = store.toRank0Ns(monoNs());
      const endTimed = beginTimed(me, `sequential workload iteration ${w + 1}`);
      const spans: Span[] = patterns.map(() => null);
      for (const p of runs) {
        const { members, senders } = roles[p.index];
        const computes = senders.includes(me);
        await patternBarrier(p, `seq-pattern-${p.index}`, waits);
        if (o.sleepBeforeLaunch) {
          if (computes) await sleepSeconds(p.sleepBeforeSec * o.sleepScale);
          // A READ pulls from the senders' buffers: only once their compute is done.
          if (p.op === 'READ') await store.barrier(`seq-ready-${p.index}`, { ranks: members, ...waits });
        }
        const r = await engine.execute(plans[p.index]);
        if (initiates(p)) spans[p.index] = [store.toRank0Ns(r.startNs), store.toRank0Ns(r.endNs)];
        if (computes) await sleepSeconds(p.sleepAfterSec * o.sleepScale);
      }
      endTimed();
      await verifyAll(w + 1, 'seq-workload-done', waits.timeoutMs);
      if (o.printRecvBuffers) {
        if (!o.verifyBuffers) await store.barrier('seq-print', waits); // every rank's transfers of the iteration are complete
        for (const p of mine) for (const line of describeReceived(p, layout, engine.regions, me)) process.stdout.write(`[iteration ${w + 1}] ${line}\n`);
      }
      const all = await store.allGather<Span[]>('seq-iteration', spans, waits);
      iterations.push({ startNs: iterationStartNs, spans: all });
      if (me === 0 && w < o.workloadIters - 1) writeJsonReport(o.jsonOutputPath, reportSoFar(true));
    }
    await engine.disconnect();
    return me === 0 ? reportSoFar(false) : undefined;
  }, ctBackendOptions(o, backend));
}

/** What the run says about sleep_before_launch_sec when it does not sleep it (kvbench's default). */
export function sleepBeforeNotes(patterns: readonly TrafficPattern[], sleepBeforeLaunch: boolean): string[] {
  const given = patterns.filter((p) => p.sleepBeforeSec > 0);
  if (sleepBeforeLaunch || given.length === 0) return [];
  return [
    `sleep_before_launch_sec of ${given.length} pattern(s) is not slept: kvbench's sequential-ct-perftest builds its patterns without it and never sleeps before one; ` +
      '--sleep-before-launch (config: sleep_before_launch: true) sleeps it',
  ];
}

/** setTimeout(0) still costs a turn of the timer queue: no sleep at all for 0. */
function sleepSeconds(seconds: number): Promise<void> {
  return seconds > 0 ? sleep(seconds * 1000) : Promise.resolve();
}
