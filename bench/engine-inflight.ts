// Many requests in flight: `disagg-bench sweep --backend shm` of 64 KiB blocks
// with nixlbench's --max_batch_size (blocks per request) and --pipeline_depth (requests in flight
// per thread), against libc memcpy of the same block size, in the same run, for several rounds.
// Baselines: one 64 KiB block copied again and again (it stays in L1/L2), and the same blocks as
// the sweep moves (batch x depth of them, each side: 4 MiB at 16 x 4, out of L2 here). The goal is
// against the second, which costs what a copy of those blocks costs on this machine; the ratio to
// the first is printed beside it. The ucx backend is measured alike.
// Goal: shm at batch 16 x depth 4 >= 0.5x memcpy of the same 64 KiB blocks (median of the rounds).
// Prints tables and appends a JSON line to bench/results/engine-inflight.jsonl.
// Command line: USAGE below (--help prints it).
import { memcpyGBps } from './lib/memcpy.ts';
import { appendResult, machine, printGoals, printTable, type Goal } from './lib/report.ts';
import { median, medianRange } from './lib/stats.ts';
import { rowKey, runSweep } from './lib/sweep-run.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/engine-inflight.ts [--rounds 5] [--iters 4000] [--smoke]
  --rounds of each backend and batch x depth, --iters iterations each. --smoke: one round of 20
  iterations, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--rounds', '1', '--iters', '20']),
  options: {
    rounds: { type: 'string', default: '5' },
    iters: { type: 'string', default: '4000' },
  },
}, USAGE);
const rounds = cli.wholeNumber('rounds');
const iterations = cli.wholeNumber('iters');
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
  const args = ['--backend', backend, '--op_type', 'WRITE', '--start_block_size', String(BLOCK), '--max_block_size', String(BLOCK),
    '--start_batch_size', String(c.batch), '--max_batch_size', String(c.batch), '--pipeline_depth', String(c.depth),
    '--num_iter', String(iterations), '--warmup_iter', String(Math.round(iterations / 10))];
  const run = await runSweep(args);
  return run.rows.get(rowKey(BLOCK, c.batch))!.gbps;
}

interface Sample {
  gbps: number;
  /** memcpy of one block / of the same blocks: the better of just before and just after the sweep. */
  hot: number;
  footprint: number;
}

async function main(): Promise<void> {
  const m = machine();
  console.log(`requests in flight, ${BLOCK / 1024} KiB blocks: ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start, ${rounds} rounds`);
  const samples = new Map<string, Sample[]>();
  for (let r = 0; r < rounds; r++) {
    for (const backend of BACKENDS) {
      for (const c of CONFIGS) {
        // memcpy just before and just after each sweep: the machine's load drifts within seconds.
        const blocks = c.batch * c.depth;
        const before = { hot: memcpyGBps(BLOCK), footprint: memcpyGBps(BLOCK, blocks) };
        const gbps = await sweepGbps(backend, c);
        const after = { hot: memcpyGBps(BLOCK), footprint: memcpyGBps(BLOCK, blocks) };
        const sample = { gbps, hot: Math.max(before.hot, after.hot), footprint: Math.max(before.footprint, after.footprint) };
        samples.set(key(backend, c), [...(samples.get(key(backend, c)) ?? []), sample]);
      }
    }
  }

  const f2 = (x: number) => x.toFixed(2);
  const spread = (xs: number[]) => medianRange(xs, f2);
  const rows = BACKENDS.flatMap((backend) =>
    CONFIGS.map((c) => {
      const s = samples.get(key(backend, c))!;
      return {
        backend,
        ...c,
        gbps: s.map((x) => x.gbps),
        hot: s.map((x) => x.hot),
        footprint: s.map((x) => x.footprint),
        vsHot: s.map((x) => x.gbps / x.hot),
        vsFootprint: s.map((x) => x.gbps / x.footprint),
      };
    }),
  );
  printTable(
    `WRITE of ${BLOCK / 1024} KiB blocks, 2 ranks, GB/s (1e9 B/s), median (min-max) over the rounds; ratios per sweep against the memcpy measured around it`,
    ['backend', 'batch', 'depth', 'engine', 'memcpy one block', 'memcpy same blocks', 'engine / one block', 'engine / same blocks'],
    rows.map((r) => [r.backend, r.batch, r.depth, spread(r.gbps), spread(r.hot), spread(r.footprint), spread(r.vsHot), spread(r.vsFootprint)]),
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
    {
      what: `the same / memcpy of one ${BLOCK / 1024} KiB block again and again (in cache), median of ${rounds} rounds`,
      value: Number(median(goalRow.vsHot).toFixed(3)),
      limit: GOAL.ratio,
      atMost: false,
      unit: 'x',
    },
  ];
  console.log();
  printGoals(goals);
  appendResult('engine-inflight', { block: BLOCK, rounds, iters: iterations, rows }, goals);
}

await main();
