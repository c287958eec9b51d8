// The all-to-all comparison from a GPU run's alltoall.jsonl (bench/gpu/alltoall.sh): per ranks and
// bytes per peer, the engine's CT perftest (cuda: copy engines parallel or staggered, or the copy
// kernel) against NCCL all_to_all_single, as time per exchange and the ratio NCCL time / CT time.
// Goal, for 64-256 MiB per peer: >= 1.3 on 2 GPUs, >= 1.2 on 4 GPUs.
// Command line: USAGE below (--help prints it).
import { appendFileSync, readFileSync } from 'node:fs';
import { benchOptions } from '../lib/options.ts';

const USAGE = `usage: npx tsx bench/gpu/summarize.ts <alltoall.jsonl>
  e.g. bench/results/gpu/2026-11-21-alltoall.jsonl, as bench/gpu/alltoall.sh writes it.`;

interface CtLine { tool: string; schedule?: string; ranks: number; size: string; report: { avg_iter_latency_ms: number } }
interface NcclLine { tool: string; ranks: number; bytes_per_peer: number; median_s: number }

const cli = benchOptions({ allowPositionals: true, options: {} }, USAGE);
if (cli.positionals.length !== 1) cli.refuse(`${cli.positionals.length} files given: expected one alltoall.jsonl`);
const file = cli.positionals[0];
const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as CtLine | NcclLine);
const mib = (size: string) => Number(size.replace(/M$/, ''));
const nccl = new Map<string, number>();
for (const l of lines) if ('median_s' in l) nccl.set(`${l.ranks}:${l.bytes_per_peer / 2 ** 20}`, l.median_s * 1000);
const rows = lines
  .filter((l): l is CtLine => 'report' in l)
  .map((l) => {
    const ncclMs = nccl.get(`${l.ranks}:${mib(l.size)}`);
    const ctMs = l.report.avg_iter_latency_ms;
    return { ranks: l.ranks, perPeer: l.size, schedule: l.schedule ?? 'parallel', ctMs, ncclMs, ratio: ncclMs ? ncclMs / ctMs : undefined };
  });
const goalOf = (ranks: number) => (ranks === 2 ? 1.3 : 1.2);
const judged = (r: (typeof rows)[number]) => mib(r.perPeer) >= 64 && mib(r.perPeer) <= 256;
console.log('ranks  per peer  schedule    CT cuda (ms)  NCCL (ms)  NCCL/CT  goal');
for (const r of rows) {
  const goal = judged(r) ? `>= ${goalOf(r.ranks)}: ${r.ratio !== undefined && r.ratio >= goalOf(r.ranks) ? 'met' : 'missed'}` : '';
  console.log(
    `${String(r.ranks).padStart(5)}  ${r.perPeer.padStart(8)}  ${r.schedule.padEnd(10)}  ${r.ctMs.toFixed(3).padStart(12)}  ${(r.ncclMs?.toFixed(3) ?? '-').padStart(9)}  ${(r.ratio?.toFixed(2) ?? '-').padStart(7)}  ${goal}`,
  );
}
appendFileSync('bench/results/gpu-alltoall.jsonl', JSON.stringify({ date: new Date().toISOString(), source: file, goal: { 2: 1.3, 4: 1.2 }, rows }) + '\n');
