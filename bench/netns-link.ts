// Cross-node transfers against iperf3 over the same link, in the same run: a
// SLURM cluster of two nodes that are apart (each in its own network namespace, joined by veth
// pairs on a bridge: scripts/slurm-local.sh with DISAGG_SLURM_NETNS=1, brought up and down here
// through the tests' fixture). Per round, in this order: iperf3 (one TCP stream, ns1 -> ns2, under
// srun on those nodes; with its default 128 KiB writes, the issue's reference, and with 1 MiB
// writes, the engine's fragment size: on this veth pair it goes ~2.5x faster, the stricter one); ucx_perftest ucp_put_bw (UCP, the second reference) with UCX's own
// fragment size and with the engine's; ucx_perftest put_bw on UCT's tcp put_zcopy (what tcp itself
// can do without UCP's emulation); `sweep --backend UCX` with the engine's UCX defaults and with
// UCX's 8 KiB fragments set in the environment; `sweep --backend LIBFABRIC` (FI_PROVIDER=tcp).
// Every sweep runs --check_consistency (every byte verified, outside the timed loop). UCX is held
// to tcp (UCX_TLS=tcp): the nodes share the host's IPC and PID namespaces, and without it UCX
// finds shared memory / CMA between them. Ratios: each figure over the mean of the iperf3 runs
// just before and after its round, against each of the two iperf3s; medians over rounds. Prints a table and appends one JSON line
// to bench/results/netns-link.jsonl. Root, iperf3, ucx-utils (ucx_perftest) and libfabric1 needed.
// Command line: USAGE below (--help prints it).
import { execa } from 'execa';
import { parseSize } from '../runners/common/size.ts';
import { netnsCluster, netnsClusterScript, netnsSrun, netnsUnsupported } from '../tests/fixtures/xfer/netns-cluster.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { serverListening } from './lib/ucx-perftest.ts';
import { maxOf, median, medianRange, minOf } from './lib/stats.ts';
import { benchArgs, smoke } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/netns-link.ts [--rounds 3] [--blocks 64M] [--seconds 5] [--smoke]
  --rounds of each figure at each size of --blocks, iperf3 runs of --seconds seconds between them.
  --smoke: one round, 1 s iperf3 runs, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--rounds', '1', '--seconds', '1']), options: { rounds: { type: 'string', default: '3' }, blocks: { type: 'string', default: '64M' }, seconds: { type: 'string', default: '5' } } }, USAGE);
const rounds = cli.wholeNumber('rounds');
const blocks = cli.labelledSizes('blocks').map(({ label, bytes }) => ({ name: label, bytes }));
const seconds = cli.wholeNumber('seconds');
const GOAL_BLOCK = parseSize('64M');
const GOAL_RATIO = 0.8;
/** UCX's own tcp fragment sizes (ucx_info -c), to show what the engine's defaults change. */
const UCX_OWN_SEGMENTS = { UCX_TCP_TX_SEG_SIZE: '8k', UCX_TCP_RX_SEG_SIZE: '64k' };
const ENGINE_SEGMENTS = { UCX_TCP_TX_SEG_SIZE: '1m', UCX_TCP_RX_SEG_SIZE: '1m' };
const PERFTEST_PORT = 13377;

interface Measure {
  name: string;
  /** GB/s per block size (a reference measures the goal block only). */
  run(): Promise<Map<number, number>>;
}

/** iperf3, one TCP stream from ns1 to ns2 for `seconds` (`write`: its -l, else its default): GB/s received. */
async function iperf3(target: string, write?: string): Promise<number> {
  const c = await netnsCluster();
  const server = execa('srun', ['-w', 'ns2', '-N', '1', '-n', '1', 'iperf3', '-s', '-1', '-B', target], { env: c.env, reject: false, all: true });
  try {
    for (let tries = 0; ; tries++) {
      const r = await netnsSrun(['-w', 'ns1', '-N', '1', '-n', '1', 'iperf3', '-c', target, '-t', String(seconds), '-J', ...(write ? ['-l', write] : [])]);
      const json = r.output.includes('{') ? (JSON.parse(r.output.slice(r.output.indexOf('{'))) as { end?: { sum_received?: { bits_per_second: number } } }) : {};
      const received = json.end?.sum_received?.bits_per_second;
      if (r.exitCode === 0 && received !== undefined) return received / 8e9;
      if (tries >= 20) throw new Error(`iperf3 client failed:\n${r.output}`);
      await new Promise((resolve) => setTimeout(resolve, 250)); // the server is not listening yet
    }
  } finally {
    server.kill();
    await server;
  }
}

let perftestRuns = 0;

/**
 * ucx_perftest, server on ns2 and client on ns1, at the goal block: GB/s (its MB/s are MiB/s).
 * Each run has its own port, and the client starts only once the server listens (its output
 * line-buffered for that), so a slow step launch or a port not yet released cannot fail it.
 */
async function ucxPerftest(target: string, args: string[], env: Record<string, string>): Promise<number> {
  let failure = '';
  // A server that says it listens yet refuses the client has been seen under load: a fresh server
  // on a fresh port, up to 3 times
  for (let server = 0; server < 3; server++) {
    const gbps = await ucxPerftestOnce(target, args, env);
    if (typeof gbps === 'number') return gbps;
    failure = gbps.failure;
  }
  if (!smoke) throw new Error(`ucx_perftest ${args.join(' ')} failed:\n${failure}`);
  // --smoke shows the script runs, keeps no figure: a reference tool that would not connect is said
  console.log(`ucx_perftest ${args.join(' ')}: not measured (${failure.trim().split('\n')[0]})`);
  return Number.NaN;
}

async function ucxPerftestOnce(target: string, args: string[], env: Record<string, string>): Promise<number | { failure: string }> {
  const c = await netnsCluster();
  const port = String(PERFTEST_PORT + perftestRuns++);
  const exported = `--export=ALL,${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(',')}`;
  const server = execa('srun', ['-w', 'ns2', '-N', '1', '-n', '1', exported, 'stdbuf', '-oL', 'ucx_perftest', '-p', port], { env: c.env, reject: false, all: true });
  try {
    await serverListening(server);
    for (let tries = 0; ; tries++) {
      const r = await netnsSrun(['-w', 'ns1', '-N', '1', '-n', '1', exported, 'ucx_perftest', target, '-p', port, ...args, '-s', String(GOAL_BLOCK), '-n', '20', '-w', '2'], { timeoutMs: 120_000 });
      const final = /^Final:\s+\d+\s+([\d.]+\s+){4}([\d.]+)/m.exec(r.output);
      if (r.exitCode === 0 && final) return (Number(final[2]) * 2 ** 20) / 1e9;
      if (tries >= 2) return { failure: r.output };
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } catch (err) {
    return { failure: (err as Error).message };
  } finally {
    server.kill();
    await server;
  }
}

/** One sweep step per block size, WRITE from the rank on ns1 to the rank on ns2, verified: GB/s per block. */
async function sweep(backend: string, env: Record<string, string>): Promise<Map<number, number>> {
  const sizes = blocks.map((b) => b.bytes);
  const args = ['sweep', '--backend', backend, '--op_type', 'WRITE', '--start_block_size', String(minOf(sizes)), '--max_block_size', String(maxOf(sizes)), '--num_iter', '32', '--warmup_iter', '4', '--large_blk_iter_ftr', '2', '--check_consistency'];
  const r = await netnsSrun(['-N', '2', '-n', '2', '--ntasks-per-node=1', 'node', 'bin/disagg-bench.js', ...args], { env, timeoutMs: 600_000 });
  if (r.exitCode !== 0 || !/Consistency check passed/.test(r.output)) throw new Error(`sweep --backend ${backend} failed:\n${r.output}`);
  const out = new Map<number, number>();
  for (const m of r.output.matchAll(/^(\d+)\s+1\s+(\d+\.\d+)\s/gm)) out.set(Number(m[1]), Number(m[2]));
  return out;
}

const atGoalBlock = async (gbps: Promise<number>) => new Map([[GOAL_BLOCK, await gbps]]);

function measures(target: string): Measure[] {
  return [
    { name: 'ucx_perftest ucp_put_bw, UCX 8 KiB fragments', run: () => atGoalBlock(ucxPerftest(target, ['-t', 'ucp_put_bw'], { UCX_TLS: 'tcp', ...UCX_OWN_SEGMENTS })) },
    { name: "ucx_perftest ucp_put_bw, the engine's 1 MiB", run: () => atGoalBlock(ucxPerftest(target, ['-t', 'ucp_put_bw'], { UCX_TLS: 'tcp', ...ENGINE_SEGMENTS })) },
    { name: 'ucx_perftest uct put_zcopy (tcp)', run: () => atGoalBlock(ucxPerftest(target, ['-t', 'put_bw', '-x', 'tcp', '-d', 'eth0', '-D', 'zcopy'], { UCX_TLS: 'tcp' })) },
    { name: 'engine ucx tcp, UCX 8 KiB fragments', run: () => sweep('UCX', { UCX_TLS: 'tcp', ...UCX_OWN_SEGMENTS }) },
    { name: 'engine ucx tcp (engine defaults)', run: () => sweep('UCX', { UCX_TLS: 'tcp' }) },
    { name: 'engine libfabric tcp', run: () => sweep('LIBFABRIC', { FI_PROVIDER: 'tcp' }) },
  ];
}

async function main(): Promise<number> {
  const unsupported = await netnsUnsupported();
  if (unsupported) {
    console.error(`netns-link: ${unsupported}`);
    return 2;
  }
  const c = await netnsCluster();
  const target = `${c.subnet}.12`;
  const list = measures(target);
  /** iperf3 before each round and after the last: default writes, 1 MiB writes. */
  const iperfDefault: number[] = [];
  const iperfLong: number[] = [];
  const measureLink = async () => {
    iperfDefault.push(await iperf3(target));
    iperfLong.push(await iperf3(target, '1M'));
  };
  /** name -> block -> GB/s per round */
  const samples = new Map(list.map((m) => [m.name, new Map<number, number[]>()]));
  await netnsClusterScript('up');
  try {
    for (let round = 0; round < rounds; round++) {
      await measureLink();
      for (const m of list) {
        for (const [block, gbps] of await m.run()) samples.get(m.name)!.set(block, [...(samples.get(m.name)!.get(block) ?? []), gbps]);
      }
      console.log(`round ${round + 1}/${rounds} done`);
    }
    await measureLink();
  } finally {
    await netnsClusterScript('down');
  }
  // each round against the link as measured around it
  const around = (link: number[], round: number) => (link[round] + link[round + 1]) / 2;
  const rows = list.flatMap((m) =>
    [...samples.get(m.name)!].map(([block, perRound]) => {
      const ratios = perRound.map((gbps, round) => gbps / around(iperfDefault, round));
      const ratiosLong = perRound.map((gbps, round) => gbps / around(iperfLong, round));
      return { measure: m.name, block: blocks.find((b) => b.bytes === block)?.name ?? String(block), gbps: median(perRound), ratio: median(ratios), ratioLong: median(ratiosLong), perRound, ratios, ratiosLong };
    }),
  );
  const f2 = (x: number) => x.toFixed(2);
  printTable(
    `two SLURM nodes in their own network namespaces (veth + bridge), WRITE ns1 -> ns2, UCX_TLS=tcp, medians (min-max) of ${rounds} round(s); ` +
      `iperf3 (one TCP stream, ${seconds} s) ${medianRange(iperfDefault, f2)} GB/s with its default writes, ${medianRange(iperfLong, f2)} with 1 MiB writes`,
    ['measure', 'block', 'GB/s', 'vs iperf3', 'vs iperf3 -l 1M'],
    rows.map((r) => [r.measure, r.block, medianRange(r.perRound, f2), medianRange(r.ratios, f2), medianRange(r.ratiosLong, f2)]),
  );
  const goalOf = (measure: string, long: boolean): Goal => {
    const row = rows.find((r) => r.measure === measure && parseSize(r.block) === GOAL_BLOCK);
    const value = long ? row?.ratioLong : row?.ratio;
    return { what: `${measure} / iperf3${long ? ' -l 1M' : ''} at 64M, median of ${rounds} rounds`, value: Number((value ?? Number.NaN).toFixed(3)), limit: GOAL_RATIO, atMost: false, unit: 'x' };
  };
  const goals = [false, true].flatMap((long) => [goalOf('engine ucx tcp (engine defaults)', long), goalOf('engine libfabric tcp', long)]);
  console.log();
  printGoals(goals);
  appendResult('netns-link', { rounds, iperf3GBps: iperfDefault, iperf3MedianGBps: median(iperfDefault), iperf3OneMiBWritesGBps: iperfLong, rows }, goals);
  return 0;
}

process.exit(await main());
