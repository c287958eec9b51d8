// `history compare <run A> <run B>`: two runs side by side, as upstream's compare_kv_perf_runs.py
// writes them (tests/integration/defs/perf/disagg/compare_kv_perf_runs.py main): a CSV whose
// first row names the column groups (run A, run B, delta_pct) and whose second row names the
// metrics; one row per test and label set (upstream: config and concurrency); values with 4
// decimals, the change (B - A) / A in percent with 2, empty where a side has no value. Upstream
// reads six fixed metrics from concurrency_<N>/result.json under two slurm_logs folders and
// groups them by its -cpp/-python suffix; here the metrics are every metric either run has, in
// name order, and the rows come from results (the store or results.json files). A figure printed
// rounded to zero is no measurement: its cell is empty (no -100 % from a busy host's `0.00`), and
// the comparison lists it once (`unmeasured`).
import { stringify } from 'csv-stringify/sync';
import type { TestRecord } from '../results/json.ts';
import { belowResolution } from '../metrics/resolution.ts';
import { labelsKey } from './series-key.ts';

export interface RunComparison {
  groupHeader: string[];
  metricHeader: string[];
  rows: string[][];
  /** `<run name>: <test> METRIC[labels]` of each value left out as printed rounded to zero. */
  unmeasured?: string[];
}

type Values = Map<string, Map<string, number>>; // row key -> metric -> value

function valuesOf(records: TestRecord[], name: string, unmeasured: string[]): Values {
  const out: Values = new Map();
  for (const r of records) {
    for (const m of r.metrics) {
      const key = JSON.stringify([r.testId, labelsKey(m.labels)]);
      if (!out.has(key)) out.set(key, new Map());
      if (belowResolution(m)) {
        const labels = labelsText(labelsKey(m.labels));
        unmeasured.push(`${name}: ${r.testId} ${m.name}${labels ? `[${labels}]` : ''}`);
        continue;
      }
      out.get(key)!.set(m.name, m.value);
    }
  }
  return out;
}

const labelsText = (labels: string) =>
  Object.entries(JSON.parse(labels) as Record<string, string | number>)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

export function compareRuns(a: TestRecord[], b: TestRecord[], names: [string, string]): RunComparison {
  const unmeasured: string[] = [];
  const [va, vb] = [valuesOf(a, names[0], unmeasured), valuesOf(b, names[1], unmeasured)];
  const keys = [...new Set([...va.keys(), ...vb.keys()])].sort();
  // every metric either run has, a value left out included (its column stays)
  const metrics = [...new Set([...a, ...b].flatMap((r) => r.metrics.map((m) => m.name)))].sort();
  const groups = [names[0], names[1], 'delta_pct'];
  const groupHeader = ['', '', ...groups.flatMap((g) => [g, ...metrics.slice(1).map(() => '')])];
  const metricHeader = ['test', 'labels', ...groups.flatMap(() => metrics)];
  const rows = keys.map((key) => {
    const [testId, labels] = JSON.parse(key) as [string, string];
    const [x, y] = [va.get(key), vb.get(key)];
    const fixed = (v: number | undefined) => (v === undefined ? '' : v.toFixed(4));
    const delta = metrics.map((m) => {
      const [v0, v1] = [x?.get(m), y?.get(m)];
      return v0 !== undefined && v1 !== undefined && v0 !== 0 ? (((v1 - v0) / v0) * 100).toFixed(2) : '';
    });
    return [testId, labelsText(labels), ...metrics.map((m) => fixed(x?.get(m))), ...metrics.map((m) => fixed(y?.get(m))), ...delta];
  });
  return { groupHeader, metricHeader, rows, unmeasured };
}

/** One line naming the values a comparison left out, or undefined (the first five named). */
export function unmeasuredComparisonLine(c: RunComparison): string | undefined {
  if (!c.unmeasured?.length) return undefined;
  const named = c.unmeasured.slice(0, 5).join(', ') + (c.unmeasured.length > 5 ? `, and ${c.unmeasured.length - 5} more` : '');
  return `${c.unmeasured.length} value(s) printed rounded to zero, left empty (no measurement): ${named}`;
}

/** The CSV text; `crlf` as Python's csv.writer ends its lines (upstream's own mode). */
export const comparisonCsv = (c: RunComparison, crlf = false) =>
  stringify([c.groupHeader, c.metricHeader, ...c.rows], { escape_formulas: true, record_delimiter: crlf ? 'windows' : 'unix' });
