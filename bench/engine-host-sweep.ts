// Block-size sweep of the transfer engine on host memory: `disagg-bench sweep`
// WRITE 4 KiB..64 MiB (doubling) with `shm` and `ucx`, against, in the same run, (a) one libc
// memcpy of the same size in this process and (b) Debian's `ucx_perftest -t ucp_put_bw` on
// loopback, with endpoints with error handling (`-e`: what NIXL's default leaves, tcp here) and
// without (UCX's default choice, shared memory here, as the engine's default between ranks of one
// node: runners/xfer/backends/ucx-options.ts). 4 KiB latency: the sweep's Avg Lat. and
// `ucx_perftest -t ucp_put_lat`. Goals: shm >= 0.9x memcpy for blocks >= 16 MiB, ucx >= 1.0x
// ucx_perftest. Prints one table and appends a JSON line to bench/results/engine-host-sweep.jsonl.
// Command line: USAGE below (--help prints it).
import { memcpyGBps } from './lib/memcpy.ts';
import { appendResult, machine, printGoals, printTable, type Goal } from './lib/report.ts';
import { minOf } from './lib/stats.ts';
import { rowKey, runSweep, type SweepRow } from './lib/sweep-run.ts';
import { perftest as ucxPerftest, type PerftestFinal } from './lib/ucx-perftest.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/engine-host-sweep.ts [--iters 200] [--warmup 20] [--ucx-tls tcp] [--perftest-mib 128] [--smoke]
  The sweep's --iters and --warmup iterations per block size; --ucx-tls: UCX_TLS of the engine and
  ucx_perftest (default: the environment's, or UCX's choice); --perftest-mib: MiB each ucx_perftest
  size moves (iterations = this / size, 3..1000). --smoke: 2 iterations, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--iters', '2', '--warmup', '1', '--perftest-mib', '1']),
  options: {
    iters: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    'ucx-tls': { type: 'string' },
    /** Bytes each ucx_perftest size moves (iterations = this / size, 3..1000): tcp here is slow. */
    'perftest-mib': { type: 'string', default: '128' },
  },
}, USAGE);
const { values } = cli;
const iters = cli.wholeNumber('iters');
const warmup = cli.wholeNumber('warmup', { min: 0 });
const perftestMib = cli.number('perftest-mib', { above: 0 });
const MIN_BLOCK = 4096;
const MAX_BLOCK = 64 * 2 ** 20;
const LARGE_BLOCK = 16 * 2 ** 20;
const sizes = Array.from({ length: Math.log2(MAX_BLOCK / MIN_BLOCK) + 1 }, (_, i) => MIN_BLOCK * 2 ** i);
// Same UCX environment for the engine and ucx_perftest; info level makes UCX log the transports
// each endpoint uses (`ep_cfg[0]: rma(...)`). The sweep sets UCX_MEM_EVENTS=no for ucx: so do we.
const ucxEnv: Record<string, string> = {
  UCX_LOG_LEVEL: 'info',
  UCX_MEM_EVENTS: process.env.UCX_MEM_EVENTS ?? 'no',
  ...(values['ucx-tls'] ? { UCX_TLS: values['ucx-tls'] } : {}),
};
const tlsLabel = values['ucx-tls'] ?? process.env.UCX_TLS ?? 'unset (UCX picks)';

/** One `disagg-bench sweep` WRITE over all sizes. */
async function engineSweep(backend: 'shm' | 'ucx'): Promise<{ rows: Map<number, SweepRow>; transports: string[] }> {
  const args = ['--backend', backend, '--op_type', 'WRITE', '--start_block_size', String(MIN_BLOCK), '--max_block_size', String(MAX_BLOCK),
    '--num_iter', String(iters), '--warmup_iter', String(warmup)];
  const run = await runSweep(args, backend === 'ucx' ? ucxEnv : {});
  return { rows: new Map(sizes.map((size) => [size, run.rows.get(rowKey(size))!])), transports: run.transports };
}

const perftest = (test: 'ucp_put_bw' | 'ucp_put_lat', size: number, iters: number, errorHandling: boolean) => ucxPerftest(test, size, iters, errorHandling, ucxEnv);

const perftestIters = (size: number) => Math.min(1000, Math.max(3, Math.round((perftestMib * 2 ** 20) / size)));

async function main(): Promise<void> {
  const m = machine();
  console.log(`engine host sweep: ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start, UCX_TLS ${tlsLabel}`);
  const memcpyBefore = sizes.map((size) => memcpyGBps(size));
  const shm = await engineSweep('shm');
  const ucx = await engineSweep('ucx');
  const perftestEh: PerftestFinal[] = [];
  const perftestDefault: PerftestFinal[] = [];
  for (const size of sizes) {
    perftestEh.push(await perftest('ucp_put_bw', size, perftestIters(size), true));
    perftestDefault.push(await perftest('ucp_put_bw', size, Math.min(1000, perftestIters(size) * 8), false));
  }
  const latEh = await perftest('ucp_put_lat', MIN_BLOCK, 1000, true);
  const latDefault = await perftest('ucp_put_lat', MIN_BLOCK, 1000, false);
  const memcpyAfter = sizes.map((size) => memcpyGBps(size));
  // memcpy before and after the engine runs: the better of the two (the machine is shared).
  const memcpy = sizes.map((_, i) => Math.max(memcpyBefore[i], memcpyAfter[i]));

  const f2 = (x: number) => x.toFixed(2);
  const rows = sizes.map((size, i) => {
    const s = shm.rows.get(size)!.gbps;
    const u = ucx.rows.get(size)!.gbps;
    return { size, memcpy: memcpy[i], shm: s, shmVsMemcpy: s / memcpy[i], ucx: u, perftestEh: perftestEh[i].gbps, ucxVsPerftestEh: u / perftestEh[i].gbps, perftestDefault: perftestDefault[i].gbps, ucxVsPerftestDefault: u / perftestDefault[i].gbps };
  });
  const sizeLabel = (b: number) => (b >= 2 ** 20 ? `${b / 2 ** 20} MiB` : `${b / 1024} KiB`);
  printTable(
    'WRITE 2 ranks, GB/s (1e9 B/s); ucx_perftest ucp_put_bw -e = with error handling (the engine\'s transports), plain = UCX\'s default',
    ['block', 'memcpy', 'shm', 'shm/memcpy', 'ucx', 'perftest -e', 'ucx/-e', 'perftest', 'ucx/plain'],
    rows.map((r) => [sizeLabel(r.size), f2(r.memcpy), f2(r.shm), f2(r.shmVsMemcpy), f2(r.ucx), f2(r.perftestEh), f2(r.ucxVsPerftestEh), f2(r.perftestDefault), f2(r.ucxVsPerftestDefault)]),
  );
  const latency = {
    shmAvgLatUs: shm.rows.get(MIN_BLOCK)!.avgLatUs,
    ucxAvgLatUs: ucx.rows.get(MIN_BLOCK)!.avgLatUs,
    perftestPutLatErrorHandlingUs: latEh.overallLatUs,
    perftestPutLatDefaultUs: latDefault.overallLatUs,
  };
  printTable('4 KiB latency, us (engine: sweep Avg Lat. per block; ucx_perftest ucp_put_lat: overall average, its half round trip)', ['what', 'us'], [
    ['engine shm', latency.shmAvgLatUs], ['engine ucx', latency.ucxAvgLatUs],
    ['ucx_perftest ucp_put_lat -e', f2(latency.perftestPutLatErrorHandlingUs)], ['ucx_perftest ucp_put_lat', f2(latency.perftestPutLatDefaultUs)],
  ]);
  const transports = {
    engineUcx: ucx.transports,
    perftestErrorHandling: [...new Set(perftestEh.flatMap((p) => p.transports))],
    perftestDefault: [...new Set(perftestDefault.flatMap((p) => p.transports))],
  };
  console.log(`\nUCX_TLS: ${tlsLabel}; transports: engine ucx ${JSON.stringify(transports.engineUcx)}, ucx_perftest -e ${JSON.stringify(transports.perftestErrorHandling)}, ucx_perftest ${JSON.stringify(transports.perftestDefault)}`);

  const large = rows.filter((r) => r.size >= LARGE_BLOCK);
  const lowest = (xs: number[]) => Number(minOf(xs).toFixed(3));
  const goals: Goal[] = [
    { what: 'shm / memcpy, lowest over blocks >= 16 MiB', value: lowest(large.map((r) => r.shmVsMemcpy)), limit: 0.9, atMost: false, unit: 'x' },
    { what: 'ucx / ucx_perftest ucp_put_bw -e (same transports), lowest over all blocks', value: lowest(rows.map((r) => r.ucxVsPerftestEh)), limit: 1.0, atMost: false, unit: 'x' },
    { what: 'ucx / ucx_perftest ucp_put_bw (UCX default transports), lowest over all blocks', value: lowest(rows.map((r) => r.ucxVsPerftestDefault)), limit: 1.0, atMost: false, unit: 'x' },
  ];
  console.log();
  printGoals(goals);
  appendResult('engine-host-sweep', {
    ucxTls: tlsLabel,
    iters,
    warmup,
    rows,
    memcpyBefore,
    memcpyAfter,
    perftestIters: sizes.map(perftestIters),
    latency4KiB: latency,
    transports,
    load1AtEnd: Number((await import('node:os')).loadavg()[0].toFixed(2)),
  }, goals);
}

await main();
