// libfabric's shm provider against memcpy at one block size (default 64 KiB), in the same run:
// rank 0 WRITEs `batch` blocks to rank 1 per execute() (the libfabric backend posts them all
// without waiting, then reads their completions), for batches of 1 to 256 blocks; the baselines,
// timed just before each execute, are rank 0 copying the same number of blocks of the same size
// between two of its own buffers, with memcpy and with process_vm_writev (CMA: the kernel call
// the provider makes per operation to write into another process, here into rank 0's own; the
// provider's fast RMA path cannot beat it). Goal: libfabric
// shm >= 0.5x memcpy at 64 KiB. FI_SHM_DISABLE_CMA=1 measures the provider's other path (copies
// through its shared-memory bounce buffers, completed when the target has copied them out).
// Prints a table and appends one JSON line to bench/results/libfabric-shm.jsonl.
// Command line: USAGE below (--help prints it).
import { fileURLToPath } from 'node:url';
import { monoNs } from '../runners/xfer/clock.ts';
import { libfabric } from '../runners/xfer/native/libfabric.ts';
import { allocateHost, libc, openStore, rankFromEnv, XferEngine, type XferRequest } from '../runners/xfer/index.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { maxOf, median } from './lib/stats.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';
import { runAsLocalRanks } from './lib/local-ranks.ts';

const USAGE = `usage: node --import tsx bench/libfabric-shm.ts [--block 64K] [--batches 1,16,64,256] [--iters 30] [--smoke]
  Batches of --batches blocks of --block bytes, median of --iters iterations. --smoke: batches of 1
  and 4, 2 iterations, no figure kept.`;

const here = fileURLToPath(import.meta.url);
const cli = benchOptions({ args: benchArgs(['--batches', '1,4', '--iters', '2']),
  options: { block: { type: 'string', default: '64K' }, batches: { type: 'string', default: '1,16,64,256' }, iters: { type: 'string', default: '30' } },
}, USAGE);
const { values } = cli;
const block = cli.size('block', { min: 1 });
const batches = cli.wholeNumbers('batches');
const iterations = cli.wholeNumber('iters');
const largest = maxOf(batches) * block;

interface Row {
  batch: number;
  /** GB/s of each timed iteration: libfabric shm, and memcpy / CMA of the same blocks just before. */
  fabric: number[];
  memcpy: number[];
  cma: number[];
}

async function rankMain(): Promise<void> {
  const info = rankFromEnv();
  const store = await openStore(info);
  const engine = await XferEngine.create({ backend: 'libfabric', rank: info, store, libfabric: { provider: 'shm' } });
  engine.allocate('buf', largest);
  await engine.connect();
  const src = info.rank === 0 ? allocateHost('memcpy-src', largest, info) : undefined;
  const dst = info.rank === 0 ? allocateHost('memcpy-dst', largest, info) : undefined;
  const rows: Row[] = [];
  for (const batch of batches) {
    const requests: XferRequest[] = Array.from({ length: info.rank === 0 ? batch : 0 }, (_, i) => ({
      op: 'WRITE', peer: 1, local: 'buf', localOffset: i * block, remote: 'buf', remoteOffset: i * block, length: block,
    }));
    const plan = await engine.prepare(requests);
    const row: Row = { batch, fabric: [], memcpy: [], cma: [] };
    for (let i = -2; i < iterations; i++) {
      await store.barrier('bench-iter');
      if (info.rank !== 0) continue;
      const t0 = monoNs();
      for (let b = 0; b < batch; b++) libc().memcpy(dst!.address + BigInt(b * block), src!.address + BigInt(b * block), block);
      const copyNs = monoNs() - t0;
      const t1 = monoNs();
      for (let b = 0; b < batch; b++) libc().processVmWritev(process.pid, src!.address + BigInt(b * block), dst!.address + BigInt(b * block), block);
      const cmaNs = monoNs() - t1;
      const result = await engine.execute(plan);
      if (i < 0) continue; // two warm-up rounds
      row.memcpy.push((batch * block) / copyNs);
      row.cma.push((batch * block) / cmaNs);
      row.fabric.push((batch * block) / (result.endNs - result.startNs));
    }
    rows.push(row);
  }
  await engine.disconnect();
  await engine.destroy();
  src?.close();
  dst?.close();
  if (info.rank === 0) report(rows);
  await store.close();
}

function report(rows: Row[]): void {
  const cmaPath = process.env.FI_SHM_DISABLE_CMA ? 'FI_SHM_DISABLE_CMA set: bounce buffers' : 'CMA';
  printTable(
    `libfabric ${libfabric().version()} shm WRITE (${cmaPath}) vs memcpy and process_vm_writev (CMA) of the same blocks, ${values.block} blocks, rank 0 -> rank 1, median of ${iterations}`,
    ['blocks per execute', 'libfabric GB/s', 'memcpy GB/s', 'CMA GB/s', 'libfabric / memcpy', 'CMA / memcpy', 'libfabric / CMA'],
    rows.map((r) => {
      const [f, m, c] = [median(r.fabric), median(r.memcpy), median(r.cma)];
      return [r.batch, f.toFixed(2), m.toFixed(2), c.toFixed(2), (f / m).toFixed(2), (c / m).toFixed(2), (f / c).toFixed(2)];
    }),
  );
  const best = rows.reduce((a, b) => (median(b.fabric) / median(b.memcpy) > median(a.fabric) / median(a.memcpy) ? b : a));
  const goals: Goal[] = [{ what: `libfabric shm / memcpy at ${values.block} (best batch, ${best.batch} blocks)`, value: Number((median(best.fabric) / median(best.memcpy)).toFixed(3)), limit: 0.5, atMost: false }];
  printGoals(goals);
  appendResult(
    'libfabric-shm',
    {
      libfabric: libfabric().version(),
      blockBytes: block,
      iterations,
      cmaDisabled: !!process.env.FI_SHM_DISABLE_CMA,
      rows: rows.map((r) => ({
        batch: r.batch,
        libfabricGBps: median(r.fabric),
        memcpyGBps: median(r.memcpy),
        cmaGBps: median(r.cma),
        ratio: median(r.fabric) / median(r.memcpy),
        cmaRatio: median(r.cma) / median(r.memcpy),
      })),
    },
    goals,
  );
}

await runAsLocalRanks(here, 2, rankMain);
