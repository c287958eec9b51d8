// CT perftest: one traffic pattern, run for warm-up and timed iterations. Every rank has
// one send buffer (its row's sum) and one receive buffer (its column's sum); WRITE pushes each
// row's slices to the receivers, READ has each receiver pull its column from the senders; each
// per-peer transfer is split into `shards` requests. A barrier starts every iteration; with
// --verify-buffers every receive slice is checked byte for byte after each warm-up iteration and
// after the timed ones (never inside the timed loop); with --print-recv-buffers every rank prints
// its receive slices after the last one.
//   disagg-bench ct-perftest config.yaml --ranks 4 --backend shm --verify-buffers --json-output-path r.json
import type { RankInfo } from '../rank.ts';
import { totalBytes } from '../matrix.ts';
import { readCtConfig } from './traffic-pattern.ts';
import { checkBuffersFit, describeReceived, layoutBuffers, patternRequests, prepareVerification, regionName, verifyReceived } from './pattern-buffers.ts';
import { CtAccumulator, formatCtReport, type CtReport, type RankRuns } from './ct-report.ts';
import { ChunkSizer } from './common/chunks.ts';
import { defaultBackend, printNotes, reportingBenchMain, runAsRank, writeJsonReport } from './bench-rank.ts';
import { beginTimed, verifying } from './common/timed-regions.ts';
import { ctBackendOptions, parseCtArgs, type CtCommonOptions } from './ct-options.ts';
import { ucxFlagsUsage } from './common/ucx-flags.ts';

export type CtPerftestOptions = CtCommonOptions;

export const ctPerftestUsage =
  'usage: disagg-bench ct-perftest CONFIG [--verify-buffers|--no-verify-buffers] [--print-recv-buffers|--no-print-recv-buffers] ' +
  '[--json-output-path P] [--backend shm|ucx|cuda|nccl|libfabric] [--cuda-copy auto|copy-engine|kernel] [--ranks N]\n' +
  `  ${ucxFlagsUsage}`;

/** The options of one rank (--ranks is the launcher's, see common/rank-launch.ts). */
export function parseCtPerftestArgs(argv: string[]): CtPerftestOptions {
  return parseCtArgs(argv, ctPerftestUsage).common;
}

/** `disagg-bench ct-perftest`: one rank under a launcher, or starts --ranks N here. */
export function ctPerftestMain(argv: string[]): Promise<number> {
  return reportingBenchMain(argv, { command: 'ct-perftest', parse: parseCtPerftestArgs, readConfig: readCtConfig, run: runCtPerftest, format: formatCtReport });
}

/** One rank's part; rank 0 returns the report. */
export async function runCtPerftest(info: RankInfo, o: CtPerftestOptions): Promise<CtReport | undefined> {
  // The matrix must match the world before anything is allocated.
  const config = readCtConfig(o.configFile, info.worldSize);
  const p = config.pattern;
  printNotes(info, p.notes);
  const backend = o.backend ?? defaultBackend([p.memory]);
  const me = info.rank;
  const layout = layoutBuffers([p]);
  // Before the store opens or anything is allocated: a 1000G cell is one sentence, not the OOM killer.
  checkBuffersFit('the CT perftest', layout, info.worldSize, info.localWorldSize);
  return runAsRank(info, backend, [p.memory], async (engine, store) => {
    for (const side of ['send', 'recv'] as const) engine.allocate(regionName(p.memory, side), layout.regionSize(p.memory, side, me), p.memory);
    await engine.connect();
    const plan = await engine.prepare(patternRequests(p, layout, me));
    const runInfo = {
      matrixFile: p.matrixFile,
      ranks: info.worldSize,
      backend,
      xferOp: p.op,
      shards: p.shards,
      memType: p.memType,
      iterations: config.iters,
      warmupIterations: config.warmupIters,
      verifiedBuffers: o.verifyBuffers,
      bytesPerIteration: totalBytes(p.matrix),
      notes: p.notes,
    };
    // Rank 0 folds the ranks' spans in chunks (memory does not grow with the iterations) and,
    // with --json-output-path, writes the report so far after every chunk, marked partial.
    const report = me === 0 ? new CtAccumulator(runInfo) : undefined;
    const verify = o.verifyBuffers;
    const prepare = (tag: number) => verifying(me, 'ct-perftest fill/poison', () => prepareVerification(p, layout, engine.regions, me, tag));
    const check = async (tag: number) => {
      await store.barrier('ct-verify'); // every initiator is done: the bytes are in place
      verifying(me, 'ct-perftest check', () => verifyReceived(p, layout, engine.regions, me, tag));
    };
    // Warm-up: untimed, so each iteration is checked on its own when verifying.
    for (let it = 0; it < config.warmupIters; it++) {
      if (verify) prepare(it);
      await store.barrier('ct-iteration');
      await engine.execute(plan);
      if (verify) await check(it);
    }
    // Timed iterations, nothing but transfers and their barriers: as kvbench (custom_traffic_perftest.py,
    // CTPerftest.run), the buffers are filled before the timed loop and checked after it, so
    // verification never counts in "Total time" or "Avg latency/iter".
    const tag = config.warmupIters;
    if (verify) prepare(tag);
    const chunks = new ChunkSizer();
    let spans: [number, number][] = [];
    let endTimed = () => {};
    for (let it = 0; it < config.iters; it++) {
      await store.barrier('ct-iteration');
      if (it === 0) endTimed = beginTimed(me, 'ct-perftest timed iterations'); // "Total time" starts with the first timed transfer
      const result = await engine.execute(plan);
      spans.push([store.toRank0Ns(result.startNs), store.toRank0Ns(result.endNs)]);
      if (spans.length === chunks.size || it === config.iters - 1) {
        const runs = await store.allGather<RankRuns>('ct-runs', { rank: me, bytes: plan.prepared.bytes, spans });
        chunks.next(runs); // every rank sees the same runs, so every rank picks the same next size
        spans = [];
        if (report) {
          report.add(runs);
          if (it < config.iters - 1) writeJsonReport(o.jsonOutputPath, report.report({ partial: true }));
        }
      }
    }
    endTimed();
    if (verify) await check(tag);
    if (o.printRecvBuffers) {
      if (!o.verifyBuffers) await store.barrier('ct-print'); // every initiator is done (verifying waited already)
      for (const line of describeReceived(p, layout, engine.regions, me)) process.stdout.write(`${line}\n`);
    }
    await engine.disconnect();
    return report?.report();
  }, ctBackendOptions(o, backend));
}
