// The NIXL EP perf tests' lines, printed by the real tests and by `disagg-bench ep`:
//   Data Plane (e2e): 8/8 ranks passed
//   Bandwidth (GB/s): avg=42.88, min=42.86, max=42.89
//   Latency (μs):     avg=519.3, min=519.1, max=519.5
// (and, from `disagg-bench ep` only, `Cross-GPU rate (GB/s): avg=.., min=.., max=..`: the bytes
// each rank received from other GPUs over the mean time, as DeepEP counts NVLink bytes;
// `Cross-rank` on host memory)
// and the control-plane table (`Control Plane: 8 experts/rank x 8 ranks = 64 total`, rows
// `init  150.23  148.15  152.31`, `TOTAL  691.81`: rank 0's avg/min/max over the rounds), or, for
// `--test <op>`, the test's line `CONNECT: 245.67ms avg across 8 ranks (min=242.33, max=248.91)
// [8 experts/rank]` (each rank's mean over the rounds; avg/min/max across the ranks). Labels:
// {mode} (+ experts_per_rank when the banner gives it) for the data plane, {operation,
// experts_per_rank} for the table, {operation, experts_per_rank, across: 'ranks'} for the line.
// Every figure is printed with 2 decimals (latency 1) and only that print exists: each keeps the
// step it was rounded to (Metric.rounded), so a busy host's `avg=0.00` is no measurement.
import type { ExtractResult, Metric } from '../metric.ts';
import { printedStep } from '../resolution.ts';
import { logLines } from './launch-prefix.ts';

const NUM = '(-?\\d+(?:\\.\\d+)?)';
const NODE_PREFIX = /^\[Node \d+\] /;
const PASSED = /Data Plane \((\w+)\): (\d+)\/(\d+) ranks passed/;
const BANNER_EXPERTS = /^Experts: (\d+)\/rank/;
const BANNER_MODE = /^Mode: (\w+)/;
const BANDWIDTH = new RegExp(`Bandwidth \\(GB/s\\):\\s*avg=${NUM},\\s*min=${NUM},\\s*max=${NUM}`);
const CROSS_RATE = new RegExp(`^Cross-(?:GPU|rank) rate \\(GB/s\\):\\s*avg=${NUM},\\s*min=${NUM},\\s*max=${NUM}`);
const LATENCY = new RegExp(`Latency \\((?:μs|us)\\):\\s*avg=${NUM},\\s*min=${NUM},\\s*max=${NUM}`);
const CONTROL = /Control Plane: (\d+) experts\/rank x (\d+) ranks/;
const CONTROL_ROW = new RegExp(`^(init|connect|disconnect|reconnect|destroy)\\s+${NUM}\\s+${NUM}\\s+${NUM}\\s*$`);
const CONTROL_TOTAL = new RegExp(`^TOTAL\\s+${NUM}\\s*$`);
/** test_control_plane.py's log_single_op_results for --test <op>: each rank's mean, across ranks. */
const SINGLE_OP = new RegExp(`(INIT|CONNECT|DISCONNECT|RECONNECT|DESTROY): ${NUM}ms avg across (\\d+) ranks \\(min=${NUM}, max=${NUM}\\) \\[(\\d+) experts/rank\\]`);

export function extractNixlEpMetrics(text: string): ExtractResult {
  const metrics: Metric[] = [];
  const problems: string[] = [];
  let experts: number | undefined;
  let mode: string | undefined;
  let controlExperts: number | undefined;
  const add = (name: string, value: string, unit: string, higherIsBetter: boolean | undefined, labels: Metric['labels']) => {
    // a count is exact; a printed decimal figure is rounded to its last digit
    const rounded = unit === 'count' ? undefined : printedStep(value);
    metrics.push({ name, value: Number(value), unit, higherIsBetter, labels: { ...labels }, ...(rounded !== undefined && { rounded }) });
  };
  const dataLabels = (): Metric['labels'] => ({ ...(mode ? { mode } : {}), ...(experts !== undefined ? { experts_per_rank: experts } : {}) });

  // the data-plane test's logging format prefixes `[Node <rank>] ` (test_data_plane.py's main)
  logLines(text).map((l) => l.replace(NODE_PREFIX, '')).forEach((line, index) => {
    let m: RegExpExecArray | null;
    if ((m = BANNER_EXPERTS.exec(line))) experts = Number(m[1]);
    else if ((m = BANNER_MODE.exec(line))) mode = m[1];
    else if ((m = PASSED.exec(line))) {
      mode = m[1];
      add('RANKS_PASSED', m[2], 'count', true, dataLabels());
      add('RANKS', m[3], 'count', undefined, dataLabels());
      if (Number(m[2]) < Number(m[3])) problems.push(`line ${index + 1}: ${line.trim()}: ${Number(m[3]) - Number(m[2])} rank(s) failed`);
    } else if ((m = BANDWIDTH.exec(line))) {
      for (const [i, stat] of ['AVG', 'MIN', 'MAX'].entries()) add(`BW_GBPS_${stat}`, m[i + 1], 'GB/s', true, dataLabels());
    } else if ((m = CROSS_RATE.exec(line.trim()))) {
      for (const [i, stat] of ['AVG', 'MIN', 'MAX'].entries()) add(`CROSS_GPU_GBPS_${stat}`, m[i + 1], 'GB/s', true, dataLabels());
    } else if ((m = LATENCY.exec(line))) {
      for (const [i, stat] of ['AVG', 'MIN', 'MAX'].entries()) add(`LAT_US_${stat}`, m[i + 1], 'us', false, dataLabels());
    } else if ((m = CONTROL.exec(line))) controlExperts = Number(m[1]);
    else if ((m = CONTROL_ROW.exec(line.trim()))) {
      if (controlExperts === undefined) problems.push(`line ${index + 1}: control-plane row outside a "Control Plane: N experts/rank" table`);
      const labels = { operation: m[1], ...(controlExperts !== undefined ? { experts_per_rank: controlExperts } : {}) };
      for (const [i, stat] of ['AVG', 'MIN', 'MAX'].entries()) add(`CP_${stat}_MS`, m[i + 2], 'ms', false, labels);
    } else if ((m = CONTROL_TOTAL.exec(line.trim())) && controlExperts !== undefined) {
      add('CP_TOTAL_MS', m[1], 'ms', false, { experts_per_rank: controlExperts });
    } else if ((m = SINGLE_OP.exec(line))) {
      const labels = { operation: m[1].toLowerCase(), experts_per_rank: Number(m[6]), across: 'ranks' };
      add('CP_AVG_MS', m[2], 'ms', false, labels);
      add('CP_MIN_MS', m[4], 'ms', false, labels);
      add('CP_MAX_MS', m[5], 'ms', false, labels);
      add('CP_RANKS', m[3], 'count', undefined, labels);
    }
  });
  if (metrics.length === 0) problems.push('no NIXL EP result lines (Data Plane / Bandwidth / Latency / Control Plane / <OP>: ... avg across N ranks) in the log');
  return { metrics, problems };
}
