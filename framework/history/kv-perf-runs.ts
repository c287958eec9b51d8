// Upstream's own input for `history compare`: two slurm_logs folders, read exactly as
// compare_kv_perf_runs.py reads them (tests/integration/defs/perf/disagg/compare_kv_perf_runs.py,
// discover_configs / load_metrics / main): each `<test folder>/concurrency_<N>/result.json`, the
// folder name without `disagg_perf_` and with its `-cpp` or `-python` suffix as the backend
// (other folders and `*_ERROR` are skipped), six metrics of result.json, one row per (config,
// concurrency) with the groups cpp_<label0>, cpp_<label1>, cpp_delta_pct, python_... This
// project's serving jobs write the same result.json files under OUTPUT_PATH/slurm_logs/<test id>/.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';
import path from 'node:path';
import type { RunComparison } from './compare-runs.ts';

/** (json key, short name), in upstream's order. */
export const KV_PERF_METRICS: readonly [string, string][] = [
  ['median_ttft_ms', 'ttft'],
  ['median_tpot_ms', 'tpot'],
  ['median_itl_ms', 'itl'],
  ['median_e2el_ms', 'e2el'],
  ['output_throughput', 'output_tput'],
  ['request_throughput', 'request_tput'],
];
const BACKENDS = ['cpp', 'python'] as const;

/** A folder of test folders holding concurrency_<N>/result.json (upstream's --run0/--run1). */
export function isSlurmLogsFolder(dir: string): boolean {
  if (!existsSync(dir) || !statSync(dir).isDirectory() || existsSync(path.join(dir, 'results.json'))) return false;
  return readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory() && readdirSync(path.join(dir, e.name)).some((s) => s.startsWith('concurrency_')));
}

/** discover_configs: {(config, backend, concurrency): result.json path}. */
function discover(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()) {
    if (entry.endsWith('_ERROR')) continue;
    let config = entry.replace('disagg_perf_', '');
    let backend: string;
    if (config.endsWith('-cpp')) [backend, config] = ['cpp', config.slice(0, -4)];
    else if (config.endsWith('-python')) [backend, config] = ['python', config.slice(0, -7)];
    else continue;
    for (const sub of readdirSync(path.join(dir, entry)).sort()) {
      const match = /^concurrency_(.+)$/.exec(sub);
      const file = path.join(dir, entry, sub, 'result.json');
      if (!match || !/^-?\d+$/.test(match[1]) || !existsSync(file)) continue;
      found.set(JSON.stringify([config, backend, Number(match[1])]), file);
    }
  }
  return found;
}

/** load_metrics: the six values of a result.json; a file that does not read is a warning and no values. */
function load(file: string, warn: (line: string) => void): Record<string, number | undefined> | undefined {
  try {
    const data = JSON.parse(readTextFileSync(file, READ_LIMITS.record)) as Record<string, unknown>;
    return Object.fromEntries(KV_PERF_METRICS.map(([key]) => [key, typeof data[key] === 'number' ? (data[key] as number) : undefined]));
  } catch (error) {
    warn(`  WARNING: failed to read ${file}: ${(error as Error).message}`);
    return undefined;
  }
}

export function compareSlurmLogs(run0: string, run1: string, labels: [string, string], warn: (line: string) => void): RunComparison & { counts: [number, number] } {
  const [c0, c1] = [discover(run0), discover(run1)];
  const keys = [...new Set([...c0.keys(), ...c1.keys()].map((k) => {
    const [config, , concurrency] = JSON.parse(k) as [string, string, number];
    return JSON.stringify([config, concurrency]);
  }))].sort((a, b) => {
    const [x, y] = [JSON.parse(a) as [string, number], JSON.parse(b) as [string, number]];
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1];
  });
  const groups = BACKENDS.flatMap((b) => [`${b}_${labels[0]}`, `${b}_${labels[1]}`, `${b}_delta_pct`]);
  const groupHeader = ['', '', ...groups.flatMap((g) => [g, ...KV_PERF_METRICS.slice(1).map(() => '')])];
  const metricHeader = ['config', 'concurrency', ...groups.flatMap(() => KV_PERF_METRICS.map(([, short]) => short))];
  const rows = keys.map((k) => {
    const [config, concurrency] = JSON.parse(k) as [string, number];
    const row = [config, String(concurrency)];
    for (const b of BACKENDS) {
      const key = JSON.stringify([config, b, concurrency]);
      const v0 = c0.has(key) ? load(c0.get(key)!, warn) : undefined;
      const v1 = c1.has(key) ? load(c1.get(key)!, warn) : undefined;
      for (const v of [v0, v1]) for (const [m] of KV_PERF_METRICS) row.push(v?.[m] !== undefined ? v[m]!.toFixed(4) : '');
      for (const [m] of KV_PERF_METRICS) {
        const [a, z] = [v0?.[m], v1?.[m]];
        row.push(a !== undefined && z !== undefined && a !== 0 ? (((z - a) / a) * 100).toFixed(2) : '');
      }
    }
    return row;
  });
  return { groupHeader, metricHeader, rows, counts: [c0.size, c1.size] };
}
