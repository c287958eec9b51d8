// One `disagg-bench sweep` as a user runs it (2 local ranks), read with the project's nixlbench
// extractor: B/W and Avg Lat. per (block, batch), and the UCX transports the ranks logged.
import { execa } from 'execa';
import path from 'node:path';
import { extractNixlbenchMetrics } from '../../framework/metrics/extractors/nixlbench.ts';
import { benchDir } from './report.ts';
import { transportsIn } from './ucx-perftest.ts';

export interface SweepRow {
  gbps: number;
  avgLatUs: number;
}

export interface SweepRun {
  /** By `${block}x${batch}`. */
  rows: Map<string, SweepRow>;
  transports: string[];
  log: string;
}

export const rowKey = (block: number, batch = 1) => `${block}x${batch}`;

/** `node bin/disagg-bench.js sweep --ranks 2 <args>` in `env`; throws with the log's tail on failure. */
export async function runSweep(args: string[], env: Record<string, string> = {}): Promise<SweepRun> {
  const argv = ['bin/disagg-bench.js', 'sweep', '--ranks', '2', ...args];
  const r = await execa('node', argv, { cwd: path.dirname(benchDir), all: true, reject: false, env });
  if (r.exitCode !== 0) throw new Error(`node ${argv.join(' ')}: exit ${r.exitCode}\n${r.all.slice(-2000)}`);
  const { metrics, problems } = extractNixlbenchMetrics(r.all);
  if (problems.length > 0) throw new Error(`sweep ${args.join(' ')}: ${problems.join('; ')}`);
  const rows = new Map<string, SweepRow>();
  for (const m of metrics) {
    const key = rowKey(Number(m.labels?.block_size), Number(m.labels?.batch_size));
    const row = rows.get(key) ?? { gbps: NaN, avgLatUs: NaN };
    if (m.name === 'BW_GBPS') row.gbps = m.value;
    if (m.name === 'AVG_LAT_US') row.avgLatUs = m.value;
    rows.set(key, row);
  }
  return { rows, transports: transportsIn(r.all), log: r.all };
}
