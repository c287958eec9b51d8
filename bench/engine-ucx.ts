// ucx at the speed of ucx_perftest: `disagg-bench sweep --backend ucx` WRITE of
// one block size against Debian's `ucx_perftest -t ucp_put_bw` (its default transports) of the
// same size, in the same run, alternating which goes first, for several rounds; ratio per round.
// Once per size, for reference: the engine as NIXL configures UCX by default (error handling
// 'peer' on every endpoint: tcp on one host) and with NIXL's memory (registered, not UCX-allocated).
// Goals (median of the rounds' ratios): >= 1.0 at 64 MiB, >= 0.8 at 1 MiB; the spread is printed.
// Prints tables and appends a JSON line to bench/results/engine-ucx.jsonl.
// Command line: USAGE below (--help prints it).
import { appendResult, machine, printGoals, printTable, type Goal } from './lib/report.ts';
import { median, medianRange } from './lib/stats.ts';
import { rowKey, runSweep } from './lib/sweep-run.ts';
import { perftest } from './lib/ucx-perftest.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/engine-ucx.ts [--rounds 5] [--reference] [--smoke]
  --rounds of the engine and ucx_perftest per size, alternating; --reference: also NIXL's default
  error handling and NIXL's memory once per size (slow here: tcp, AM). --smoke: one round, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--rounds', '1']),
  options: {
    rounds: { type: 'string', default: '5' },
    /** Also run NIXL's default error handling and NIXL's memory once per size (slow here: tcp, AM). */
    reference: { type: 'boolean', default: false },
  },
}, USAGE);
const { values } = cli;
const rounds = cli.wholeNumber('rounds');
const MiB = 2 ** 20;
/** Block size, iterations (engine and perftest alike), warm-up, goal. */
const SIZES = [
  { block: MiB, iters: 2000, warmup: 200, goal: 0.8 },
  { block: 64 * MiB, iters: 40, warmup: 4, goal: 1.0 },
];
// Info level makes UCX log each endpoint's transports (`ep_cfg[0]: rma(...)`); the engine sets
// UCX_MEM_EVENTS=no for itself: so do we for ucx_perftest. No UCX_TLS: UCX's default transports.
const ucxEnv = { UCX_LOG_LEVEL: 'info', UCX_MEM_EVENTS: process.env.UCX_MEM_EVENTS ?? 'no' };

async function engineGbps(block: number, iters: number, warmup: number, choices: string[] = []): Promise<{ gbps: number; transports: string[] }> {
  // --large_blk_iter_ftr 1: the same iterations as ucx_perftest above 1 MiB too.
  const args = ['--backend', 'ucx', '--op_type', 'WRITE', '--start_block_size', String(block), '--max_block_size', String(block),
    '--num_iter', String(iters), '--warmup_iter', String(warmup), '--large_blk_iter_ftr', '1', ...choices];
  const run = await runSweep(args, ucxEnv);
  return { gbps: run.rows.get(rowKey(block))!.gbps, transports: run.transports };
}

async function main(): Promise<void> {
  const m = machine();
  console.log(`engine ucx vs ucx_perftest: ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start, ${rounds} rounds`);
  const results = [];
  for (const s of SIZES) {
    const engine: number[] = [];
    const base: number[] = [];
    const transports = { engine: new Set<string>(), perftest: new Set<string>() };
    for (let r = 0; r < rounds; r++) {
      const runPerftest = async () => {
        const p = await perftest('ucp_put_bw', s.block, s.iters, false, ucxEnv);
        base.push(p.gbps);
        p.transports.forEach((t) => transports.perftest.add(t));
      };
      const runEngine = async () => {
        const e = await engineGbps(s.block, s.iters, s.warmup);
        engine.push(e.gbps);
        e.transports.forEach((t) => transports.engine.add(t));
      };
      // Alternate which goes first: the machine's load drifts.
      if (r % 2 === 0) await runPerftest().then(runEngine);
      else await runEngine().then(runPerftest);
    }
    const ratios = engine.map((e, i) => e / base[i]);
    const reference = values.reference
      ? {
          nixlDefaultPeer: (await engineGbps(s.block, Math.max(4, s.iters >> 4), 1, ['--ucx-error-handling', 'peer'])).gbps,
          nixlMemoryRegistered: (await engineGbps(s.block, Math.max(4, s.iters >> 4), 1, ['--ucx-memory', 'registered'])).gbps,
        }
      : undefined;
    results.push({ ...s, engine, perftest: base, ratios, transports: { engine: [...transports.engine], perftest: [...transports.perftest] }, reference });
  }

  const f2 = (x: number) => x.toFixed(2);
  const label = (b: number) => `${b / MiB} MiB`;
  const spread = (xs: number[]) => medianRange(xs, f2);
  printTable(
    'WRITE, 2 ranks on one host, GB/s (1e9 B/s): median (min-max) over the rounds; ratio per round, then its median',
    ['block', 'engine ucx', 'ucx_perftest ucp_put_bw', 'ratio', 'ratios by round'],
    results.map((r) => [label(r.block), spread(r.engine), spread(r.perftest), spread(r.ratios), r.ratios.map(f2).join(' ')]),
  );
  if (values.reference) {
    printTable(
      'Reference, one run each, GB/s: the engine as NIXL sets UCX up by default',
      ['block', 'error handling peer (tcp here)', 'memory registered'],
      results.map((r) => [label(r.block), f2(r.reference!.nixlDefaultPeer), f2(r.reference!.nixlMemoryRegistered)]),
    );
  }
  for (const r of results) console.log(`transports ${label(r.block)}: engine ${JSON.stringify(r.transports.engine)}, ucx_perftest ${JSON.stringify(r.transports.perftest)}`);
  const goals: Goal[] = results.map((r) => ({
    what: `ucx / ucx_perftest ucp_put_bw at ${label(r.block)}, median of ${rounds} rounds`,
    value: Number(median(r.ratios).toFixed(3)),
    limit: r.goal,
    atMost: false,
    unit: 'x',
  }));
  console.log();
  printGoals(goals);
  appendResult('engine-ucx', { rounds, sizes: results }, goals);
}

await main();
