// EP at the seed's shape from a GPU run's `ep` part (bench/gpu/run.sh ep): e2e latency of the
// GPU-initiated path (one kernel per phase) against the host-posted emulation, per world size,
// read from the logs with the framework's own NIXL EP parser. Goal: host / GPU >= 2.
// Command line: USAGE below (--help prints it).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { extractNixlEpMetrics } from '../../framework/metrics/extractors/nixl-ep.ts';
import { resultsDir } from '../lib/report.ts';
import { benchOptions } from '../lib/options.ts';

const USAGE = `usage: npx tsx bench/gpu/summarize-ep.ts <folder of the ep part>
  The folder holds ep-cuda-N-gpu.log and ep-cuda-N-host.log for N = 2, 4, 8 (bench/gpu/run.sh ep).`;

const GOAL = 2;
const cli = benchOptions({ allowPositionals: true, options: {} }, USAGE);
if (cli.positionals.length !== 1) cli.refuse(`${cli.positionals.length} folders given: expected one, the ep part's`);
const dir = cli.positionals[0];
/** Mean e2e latency (us) and ranks passed in one log, or undefined when it has none. */
function e2e(file: string): { latencyUs: number; passed: string } | undefined {
  if (!existsSync(file)) return undefined;
  const { metrics } = extractNixlEpMetrics(readFileSync(file, 'utf8'));
  const of = (name: string) => metrics.find((m) => m.name === name && m.labels.mode === 'e2e')?.value;
  const latencyUs = of('LAT_US_AVG');
  return latencyUs === undefined ? undefined : { latencyUs, passed: `${of('RANKS_PASSED')}/${of('RANKS')}` };
}
const rows = [2, 4, 8].flatMap((ranks) => {
  const [gpu, host] = ['gpu', 'host'].map((by) => e2e(path.join(dir, `ep-cuda-${ranks}-${by}.log`)));
  return gpu && host ? [{ ranks, gpuUs: gpu.latencyUs, hostUs: host.latencyUs, ratio: host.latencyUs / gpu.latencyUs, passed: [gpu.passed, host.passed] }] : [];
});
console.log('ranks  GPU-initiated e2e (us)  host-posted e2e (us)  host/GPU  goal');
for (const r of rows) {
  console.log(`${String(r.ranks).padStart(5)}  ${r.gpuUs.toFixed(1).padStart(22)}  ${r.hostUs.toFixed(1).padStart(20)}  ${r.ratio.toFixed(2).padStart(8)}  >= ${GOAL}: ${r.ratio >= GOAL ? 'met' : 'missed'}`);
}
if (rows.length === 0) console.log(`no pair of ep-cuda-N-gpu.log / ep-cuda-N-host.log with an e2e result in ${dir}`);
appendFileSync(path.join(resultsDir, 'gpu-ep.jsonl'), JSON.stringify({ date: new Date().toISOString(), source: dir, goal: GOAL, rows }) + '\n');
