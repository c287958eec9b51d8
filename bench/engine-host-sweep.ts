// Block-size sweep of the transfer engine on host memory (issue 9 item 3): `disagg-bench sweep`
// WRITE 4 KiB..64 MiB (doubling) with `shm` and `ucx`, against, in the same run, (a) one libc
// memcpy of the same size in this process and (b) Debian's `ucx_perftest -t ucp_put_bw` on
// loopback, with endpoints with error handling (`-e`, the engine's default: same transports) and
// without (UCX's default choice, shared memory here). 4 KiB latency: the sweep's Avg Lat. and
// `ucx_perftest -t ucp_put_lat`. Goals: shm >= 0.9x memcpy for blocks >= 16 MiB, ucx >= 1.0x
// ucx_perftest. Prints one table and appends a JSON line to bench/results/engine-host-sweep.jsonl.
//   node --import tsx bench/engine-host-sweep.ts [--iters 200] [--warmup 20] [--ucx-tls tcp]
import { execa } from 'execa';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { extractNixlbenchMetrics } from '../framework/metrics/extractors/nixlbench.ts';
import { libc, MAP_ANONYMOUS, MAP_POPULATE, MAP_PRIVATE, PROT_READ, PROT_WRITE } from '../runners/xfer/native/libc.ts';
import { monoNs } from '../runners/xfer/clock.ts';
import { appendResult, benchDir, machine, printGoals, printTable, type Goal } from './lib/report.ts';
import { median, minOf } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    iters: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    'ucx-tls': { type: 'string' },
    /** Bytes each ucx_perftest size moves (iterations = this / size, 3..1000): tcp here is slow. */
    'perftest-mib': { type: 'string', default: '128' },
  },
});
const MIN_BLOCK = 4096;
const MAX_BLOCK = 64 * 2 ** 20;
const LARGE_BLOCK = 16 * 2 ** 20;
const sizes = Array.from({ length: Math.log2(MAX_BLOCK / MIN_BLOCK) + 1 }, (_, i) => MIN_BLOCK * 2 ** i);
const repoRoot = path.dirname(benchDir);
// Same UCX environment for the engine and ucx_perftest; info level makes UCX log the transports
// each endpoint uses (`ep_cfg[0]: rma(...)`). The sweep sets UCX_MEM_EVENTS=no for ucx: so do we.
const ucxEnv: Record<string, string> = {
  UCX_LOG_LEVEL: 'info',
  UCX_MEM_EVENTS: process.env.UCX_MEM_EVENTS ?? 'no',
  ...(values['ucx-tls'] ? { UCX_TLS: values['ucx-tls'] } : {}),
};
const tlsLabel = values['ucx-tls'] ?? process.env.UCX_TLS ?? 'unset (UCX picks)';

/** GB/s (1e9 B/s) of one memcpy of `size` bytes: median over 3 timed loops of ~64 MiB each. */
function memcpyGBps(size: number): number {
  const c = libc();
  const map = (n: number) => c.mmap(n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1);
  const src = map(size);
  const dst = map(size);
  const n = Math.min(4000, Math.max(5, Math.round(2 ** 26 / size)));
  c.memcpy(dst, src, size); // warm-up
  const loops = [0, 1, 2].map(() => {
    const t0 = monoNs();
    for (let i = 0; i < n; i++) c.memcpy(dst, src, size);
    return (n * size) / (monoNs() - t0);
  });
  c.munmap(src, size);
  c.munmap(dst, size);
  return median(loops);
}

interface SweepRow {
  gbps: number;
  avgLatUs: number;
}

/** One `disagg-bench sweep` WRITE over all sizes, read with the project's nixlbench extractor. */
async function engineSweep(backend: 'shm' | 'ucx'): Promise<{ rows: Map<number, SweepRow>; transports: string[] }> {
  const args = ['bin/disagg-bench.js', 'sweep', '--ranks', '2', '--backend', backend, '--op_type', 'WRITE',
    '--start_block_size', String(MIN_BLOCK), '--max_block_size', String(MAX_BLOCK),
    '--num_iter', values.iters!, '--warmup_iter', values.warmup!];
  const r = await execa('node', args, { cwd: repoRoot, all: true, reject: false, env: backend === 'ucx' ? ucxEnv : {} });
  if (r.exitCode !== 0) throw new Error(`node ${args.join(' ')}: exit ${r.exitCode}\n${r.all.slice(-2000)}`);
  const { metrics, problems } = extractNixlbenchMetrics(r.all);
  if (problems.length > 0) throw new Error(`sweep ${backend}: ${problems.join('; ')}`);
  const rows = new Map<number, SweepRow>();
  for (const m of metrics) {
    const size = Number(m.labels?.block_size);
    const row = rows.get(size) ?? { gbps: NaN, avgLatUs: NaN };
    if (m.name === 'BW_GBPS') row.gbps = m.value;
    if (m.name === 'AVG_LAT_US') row.avgLatUs = m.value;
    rows.set(size, row);
  }
  return { rows, transports: transportsIn(r.all) };
}

/** Distinct `ep_cfg[N]: ...` transport lines UCX logs at info level. */
function transportsIn(log: string): string[] {
  return [...new Set([...log.matchAll(/ep_cfg\[\d+\]:\s*(.+)$/gm)].map((m) => m[1].trim()))];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

interface PerftestFinal {
  iters: number;
  avgLatUs: number;
  overallLatUs: number;
  /** From its `MB/s overall`, which is bytes/s / 2^20 (perftest.c: total_average / (1024.0 * 1024.0)). */
  gbps: number;
  transports: string[];
}

/** One ucx_perftest server + client on loopback; the server is killed after whatever happens. */
async function perftest(test: 'ucp_put_bw' | 'ucp_put_lat', size: number, iters: number, errorHandling: boolean): Promise<PerftestFinal> {
  const port = String(await freePort());
  const common = ['-p', port, ...(errorHandling ? ['-e'] : [])];
  const server = execa('ucx_perftest', common, { all: true, reject: false, env: ucxEnv });
  const client = ['127.0.0.1', ...common, '-t', test, '-s', String(size), '-n', String(iters), '-w', String(Math.max(1, iters >> 3))];
  try {
    for (let attempt = 0; ; attempt++) {
      const r = await execa('ucx_perftest', client, { all: true, reject: false, env: ucxEnv, timeout: 120_000 });
      const final = /^Final:\s+(.+)$/m.exec(r.all);
      if (r.exitCode === 0 && final) {
        const f = final[1].trim().split(/\s+/).map(Number);
        if (f.length !== 8 || f.some(Number.isNaN)) throw new Error(`ucx_perftest ${client.join(' ')}: unexpected Final line: ${final[0]}`);
        // Final: iters, 50%ile lat, avg lat, overall lat, MB/s avg, MB/s overall, msg/s avg, msg/s overall
        return { iters: f[0], avgLatUs: f[2], overallLatUs: f[3], gbps: (f[5] * 2 ** 20) / 1e9, transports: transportsIn(r.all) };
      }
      // The server may not listen yet: the client then fails to connect; retry for ~3 s.
      if (attempt >= 30 || server.exitCode !== null) {
        throw new Error(`ucx_perftest ${client.join(' ')}: exit ${r.exitCode}${final ? '' : ', no Final line'}\n${r.all.slice(-1500)}`);
      }
      await new Promise((ok) => setTimeout(ok, 100));
    }
  } finally {
    server.kill('SIGTERM');
    await server;
  }
}

const perftestIters = (size: number) => Math.min(1000, Math.max(3, Math.round((Number(values['perftest-mib']) * 2 ** 20) / size)));

async function main(): Promise<void> {
  const m = machine();
  console.log(`engine host sweep: ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start, UCX_TLS ${tlsLabel}`);
  const memcpyBefore = sizes.map(memcpyGBps);
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
  const memcpyAfter = sizes.map(memcpyGBps);
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
    iters: Number(values.iters),
    warmup: Number(values.warmup),
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
