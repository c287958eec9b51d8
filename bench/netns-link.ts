// Cross-node transfers against iperf3 over the same link, in the same run: a SLURM cluster of two
// nodes that are apart (each in its own network namespace, joined by veth pairs on a bridge:
// scripts/slurm-local.sh with DISAGG_SLURM_NETNS=1, brought up and down here through the tests'
// fixture), then, per round: iperf3 (one TCP stream, ns1 -> ns2, under srun on those nodes),
// `sweep --backend UCX` and `sweep --backend LIBFABRIC` (FI_PROVIDER=tcp), WRITE ns1 -> ns2 at
// each block size. Ratios = transfer GB/s / iperf3 GB/s (medians over rounds). Prints a table and
// appends one JSON line to bench/results/netns-link.jsonl. Root, iperf3 and libfabric1 needed.
//   node --import tsx bench/netns-link.ts [--rounds 3] [--blocks 1M,64M] [--seconds 5]
import { execa } from 'execa';
import { parseArgs } from 'node:util';
import { parseSize } from '../runners/common/size.ts';
import { netnsCluster, netnsClusterScript, netnsSrun, netnsUnsupported } from '../tests/fixtures/xfer/netns-cluster.ts';
import { appendResult, printTable } from './lib/report.ts';
import { maxOf, median, minOf } from './lib/stats.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, blocks: { type: 'string', default: '1M,64M' }, seconds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const blocks = values.blocks.split(',').map((b) => ({ name: b, bytes: parseSize(b) }));
const transports = [
  { name: 'ucx', backend: 'UCX', env: {} as Record<string, string> },
  { name: 'libfabric tcp', backend: 'LIBFABRIC', env: { FI_PROVIDER: 'tcp' } },
];

/** iperf3, one TCP stream from ns1 to ns2 for `seconds`: GB/s received. */
async function iperf3(target: string): Promise<number> {
  const c = await netnsCluster();
  const server = execa('srun', ['-w', 'ns2', '-N', '1', '-n', '1', 'iperf3', '-s', '-1', '-B', target], { env: c.env, reject: false, all: true });
  try {
    for (let tries = 0; ; tries++) {
      const r = await netnsSrun(['-w', 'ns1', '-N', '1', '-n', '1', 'iperf3', '-c', target, '-t', values.seconds, '-J']);
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

/** One sweep step per block size, WRITE from the rank on ns1 to the rank on ns2: GB/s per block. */
async function sweep(backend: string, env: Record<string, string>): Promise<Map<number, number>> {
  const sizes = blocks.map((b) => b.bytes);
  const args = ['sweep', '--backend', backend, '--op_type', 'WRITE', '--start_block_size', String(minOf(sizes)), '--max_block_size', String(maxOf(sizes)), '--num_iter', '32', '--warmup_iter', '4', '--large_blk_iter_ftr', '2'];
  const r = await netnsSrun(['-N', '2', '-n', '2', '--ntasks-per-node=1', 'node', 'bin/disagg-bench.js', ...args], { env, timeoutMs: 600_000 });
  if (r.exitCode !== 0) throw new Error(`sweep --backend ${backend} failed:\n${r.output}`);
  const out = new Map<number, number>();
  for (const m of r.output.matchAll(/^(\d+)\s+1\s+(\d+\.\d+)\s/gm)) out.set(Number(m[1]), Number(m[2]));
  return out;
}

async function main(): Promise<number> {
  const unsupported = await netnsUnsupported();
  if (unsupported) {
    console.error(`netns-link: ${unsupported}`);
    return 2;
  }
  const c = await netnsCluster();
  const target = `${c.subnet}.12`;
  const samples = { iperf3: [] as number[], ...Object.fromEntries(transports.map((t) => [t.name, new Map(blocks.map((b) => [b.bytes, [] as number[]]))])) } as Record<string, unknown>;
  await netnsClusterScript('up');
  try {
    for (let round = 0; round < rounds; round++) {
      (samples.iperf3 as number[]).push(await iperf3(target));
      for (const t of transports) {
        const measured = await sweep(t.backend, t.env);
        for (const b of blocks) (samples[t.name] as Map<number, number[]>).get(b.bytes)!.push(measured.get(b.bytes) ?? Number.NaN);
      }
      console.log(`round ${round + 1}/${rounds} done`);
    }
  } finally {
    await netnsClusterScript('down');
  }
  const link = median(samples.iperf3 as number[]);
  const rows = transports.flatMap((t) =>
    blocks.map((b) => {
      const perRound = (samples[t.name] as Map<number, number[]>).get(b.bytes)!;
      const gbps = median(perRound);
      return { transport: t.name, block: b.name, gbps, ratio: gbps / link, perRound };
    }),
  );
  printTable(
    `two SLURM nodes in their own network namespaces (veth + bridge), WRITE ns1 -> ns2, medians of ${rounds} round(s); iperf3 ${link.toFixed(3)} GB/s (one TCP stream, ${values.seconds} s)`,
    ['transport', 'block', 'GB/s', 'vs iperf3'],
    rows.map((r) => [r.transport, r.block, r.gbps.toFixed(3), r.ratio.toFixed(2)]),
  );
  appendResult('netns-link', { rounds, iperf3GBps: samples.iperf3, iperf3MedianGBps: link, rows });
  return 0;
}

process.exit(await main());
