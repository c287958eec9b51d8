// Many requests in flight (issue 16 item 3): `disagg-bench sweep --backend shm` of 64 KiB blocks
// with nixlbench's --max_batch_size (blocks per request) and --pipeline_depth (requests in flight
// per thread), against libc memcpy of the same block size, in the same run, for several rounds.
// Baselines: one 64 KiB block copied again and again (it stays in L1/L2), and the same blocks as
// the sweep moves (batch x depth of them, each side: 4 MiB at 16 x 4, out of L2 here). The goal is
// against the second, which costs what a copy of those blocks costs on this machine; the ratio to
// the first is printed beside it. The ucx backend is measured alike.
// Goal: shm at batch 16 x depth 4 >= 0.5x memcpy of the same 64 KiB blocks (median of the rounds).
// Prints tables and appends a JSON line to bench/results/engine-inflight.jsonl.
//   node --import tsx bench/engine-inflight.ts [--rounds 5] [--iters 4000]
import { parseArgs } from 'node:util';
import { memcpyGBps } from './lib/memcpy.ts';
import { appendResult, machine, printGoals, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { rowKey, runSweep } from './lib/sweep-run.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    iters: { type: 'string', default: '4000' },
  },
});
const rounds = Number(values.rounds);
const BLOCK = 64 * 1024;
/** (batch, depth): one request at a time first (the sweep's defaults), the goal's configuration last. */
const CONFIGS = [
  { batch: 1, depth: 1 },
  { batch: 1, depth: 8 },
  { batch: 4, depth: 4 },
  { batch: 16, depth: 1 },
  { batch: 16, depth: 4 },
] as const;
const GOAL = { backend: 'shm', batch: 16, depth: 4, ratio: 0.5 };
const BACKENDS = ['shm', 'ucx'] as const;

const key = (backend: string, c: { batch: number; depth: number }) => `${backend} ${c.batch}x${c.depth}`;

async function sweepGbps(backend: string, c: { batch: number; depth: number }): Promise<number> {
  const iters = values.iters!;
  const args = ['--backend', backend, '--op_type', 'WRITE', '--start_block_size', String(BLOCK), '--max_block_size', String(BLOCK),
    '--start_batch_size', String(c.batch), '--max_batch_size', String(c.batch), '--pipeline_depth', String(c.depth),
    '--num_iter', iters, '--warmup_iter', String(Math.round(Number(iters) / 10))];
  const run = await runSweep(args);
  return run.rows.get(rowKey(BLOCK, c.batch))!.gbps;
}

async function main(): Promise<void> {
  const m = machine();
  console.log(`requests in flight, ${BLOCK / 1024} KiB blocks: ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start, ${rounds} rounds`);
  const engine = new Map<string, number[]>();
  const memcpyHot: number[] = [];
  const memcpyFootprint = new Map<number, number[]>();
  const push = <K>(map: Map<K, number[]>, k: K, v: number) => map.set(k, [...(map.get(k) ?? []), v]);
  for (let r = 0; r < rounds; r++) {
    // memcpy before the engine in even rounds, after in odd ones: the machine's load drifts.
    const baselines = () => {
      memcpyHot.push(memcpyGBps(BLOCK));
      for (const blocks of new Set(CONFIGS.map((c) => c.batch * c.depth))) push(memcpyFootprint, blocks, memcpyGBps(BLOCK, blocks));
    };
    if (r % 2 === 0) baselines();
    for (const backend of BACKENDS) for (const c of CONFIGS) push(engine, key(backend, c), await sweepGbps(backend, c));
    if (r % 2 === 1) baselines();
  }

  const f2 = (x: number) => x.toFixed(2);
  const spread = (xs: number[]) => `${f2(median(xs))} (${f2(Math.min(...xs))}-${f2(Math.max(...xs))})`;
  // Ratios per round: the engine against that round's memcpy.
  const ratios = (xs: number[], base: number[]) => xs.map((x, i) => x / base[i]);
  const rows = BACKENDS.flatMap((backend) =>
    CONFIGS.map((c) => {
      const gbps = engine.get(key(backend, c))!;
      const footprint = memcpyFootprint.get(c.batch * c.depth)!;
      return { backend, ...c, gbps, vsHot: ratios(gbps, memcpyHot), vsFootprint: ratios(gbps, footprint), footprint };
    }),
  );
  printTable(
    `WRITE of ${BLOCK / 1024} KiB blocks, 2 ranks, GB/s (1e9 B/s), median (min-max) over the rounds; memcpy of one block: ${spread(memcpyHot)}`,
    ['backend', 'batch', 'depth', 'engine', 'memcpy same blocks', 'engine / memcpy', 'engine / memcpy same blocks'],
    rows.map((r) => [r.backend, r.batch, r.depth, spread(r.gbps), spread(r.footprint), spread(r.vsHot), spread(r.vsFootprint)]),
  );
  const goalRow = rows.find((r) => r.backend === GOAL.backend && r.batch === GOAL.batch && r.depth === GOAL.depth)!;
  const goals: Goal[] = [
    {
      what: `shm ${BLOCK / 1024} KiB, batch ${GOAL.batch} x pipeline depth ${GOAL.depth}, / memcpy of the same blocks, median of ${rounds} rounds`,
      value: Number(median(goalRow.vsFootprint).toFixed(3)),
      limit: GOAL.ratio,
      atMost: false,
      unit: 'x',
    },
  ];
  console.log();
  printGoals(goals);
  appendResult('engine-inflight', { block: BLOCK, rounds, iters: Number(values.iters), memcpyHot, rows }, goals);
}

await main();
