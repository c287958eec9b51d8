// `history compare-backends`: the default KV-cache transfer backend against UCX, as upstream's
// compare_backends.py (tests/integration/defs/perf/disagg/compare_backends.py compare_backends):
// rows of disagg_perf tests whose names differ only in `ccb-<BACKEND>` are paired per metric
// (ccb-DEFAULT counts as the default backend, NIXL unless --default-backend says otherwise);
// regression_pct = (default - UCX) / UCX * 100; Fail when it exceeds the threshold (5 %), or when
// UCX's value is 0 and the default's is not; only a slower default backend fails. Single-backend
// cases are skipped. Deliberate difference: upstream's formula treats every metric as lower-is-
// better (true of the TTFT and E2EL its CSV holds); a metric known to be higher-is-better
// (throughput) is mirrored here, so "slower" stays slower. Metrics without a direction are
// compared upstream's way. A record's figure printed rounded to zero is no measurement: its pair
// is not judged (upstream would fail a UCX `0.00`), and counted apart.
import type { TestRecord } from '../results/json.ts';
import { belowResolution } from '../metrics/resolution.ts';
import { escapeHtml } from '../results/report/escape.ts';

/** One value as upstream reads a CSV row: its name, metric and value. */
export interface BackendRow {
  /** network_name: test id with label suffixes (`_con:8`). */
  name: string;
  metric: string;
  value: number;
  higherIsBetter?: boolean;
  /** Printed rounded to zero (a record's Metric.rounded): no measurement. */
  unmeasured?: boolean;
}

export interface BackendPair {
  defaultName: string;
  ucxName: string;
  metric: string;
  defaultValue: number;
  ucxValue: number;
  /** |regression_pct|; null when UCX's value is 0. */
  diffPct: number | null;
  /** Positive: the default backend is slower. */
  regressionPct: number | null;
  status: 'Pass' | 'Fail';
}

export interface BackendComparison {
  defaultBackend: string;
  threshold: number;
  pairs: BackendPair[];
  singleBackendSkipped: number;
  /** Pairs not judged: a side was printed rounded to zero. */
  unmeasuredSkipped: number;
}

const backendOf = (name: string) => /ccb-(\w+)/.exec(name)?.[1];
const baseCase = (name: string) => name.replace(/ccb-\w+/g, 'ccb-BACKEND');

/**
 * Rows of records named as upstream's CSV names them (`test_benchmark[<test id>]_con:<N>`): the
 * bracket ends the `ccb-(\w+)` match, which would otherwise run on into `_con`.
 */
export function rowsOfRecords(records: TestRecord[]): BackendRow[] {
  return records.flatMap((r) =>
    r.metrics.map((m) => ({
      name: `test_benchmark[${r.testId}]` + Object.entries(m.labels).map(([k, v]) => `_${k === 'concurrency' ? 'con' : k}:${v}`).join(''),
      metric: m.name,
      value: m.value,
      higherIsBetter: m.higherIsBetter,
      ...(belowResolution(m) && { unmeasured: true }),
    })),
  );
}

export function compareBackends(rows: BackendRow[], options: { threshold?: number; defaultBackend?: string } = {}): BackendComparison {
  const threshold = options.threshold ?? 5;
  const defaultBackend = options.defaultBackend ?? 'NIXL';
  const groups = new Map<string, BackendRow[]>();
  for (const row of rows.filter((r) => r.name.includes('disagg_perf_'))) {
    const key = JSON.stringify([baseCase(row.name), row.metric]);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(row);
  }
  const pairs: BackendPair[] = [];
  let singleBackendSkipped = 0;
  let unmeasuredSkipped = 0;
  for (const [key, group] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const metric = (JSON.parse(key) as string[])[1];
    const backend = (r: BackendRow) => {
      const b = backendOf(r.name);
      return b && b.toUpperCase() === 'DEFAULT' ? defaultBackend : b;
    };
    // As upstream: the first row of each side (`.values[0]`).
    const def = group.find((r) => backend(r) === defaultBackend);
    const ucx = group.find((r) => backend(r) === 'UCX');
    if (!def || !ucx) {
      singleBackendSkipped++;
      continue;
    }
    if (def.unmeasured || ucx.unmeasured) {
      unmeasuredSkipped++;
      continue;
    }
    let regressionPct: number | null = null;
    let status: BackendPair['status'] = 'Pass';
    if (ucx.value !== 0) {
      const higher = def.higherIsBetter ?? ucx.higherIsBetter;
      regressionPct = ((higher ? ucx.value - def.value : def.value - ucx.value) / ucx.value) * 100;
      if (regressionPct > threshold) status = 'Fail';
    } else if (def.value !== 0) status = 'Fail';
    pairs.push({ defaultName: def.name, ucxName: ucx.name, metric, defaultValue: def.value, ucxValue: ucx.value, diffPct: regressionPct === null ? null : Math.abs(regressionPct), regressionPct, status });
  }
  return { defaultBackend, threshold, pairs, singleBackendSkipped, unmeasuredSkipped };
}

export const BACKEND_CSV_COLUMNS = ['test_case_name_default', 'test_case_name_ucx', 'metric_type', 'default_value', 'ucx_value', 'diff_pct', 'regression_pct', 'status'];

export function backendCsvRows(c: BackendComparison): (string | number)[][] {
  return c.pairs.map((p) => [p.defaultName, p.ucxName, p.metric, p.defaultValue, p.ucxValue, p.diffPct ?? '', p.regressionPct ?? '', p.status]);
}

/** A self-contained page with upstream's table (its columns and Pass/Fail marks), in this project's words. */
export function backendHtml(c: BackendComparison, generated: Date): string {
  const failed = c.pairs.filter((p) => p.status === 'Fail').length;
  const pct = (v: number | null, signed = false) => (v === null ? 'N/A' : `${signed && v > 0 ? '+' : ''}${v.toFixed(2)}%`);
  const rows = c.pairs
    .map(
      (p) =>
        `<tr><td class="name">${escapeHtml(p.defaultName)}</td><td class="name">${escapeHtml(p.ucxName)}</td><td>${escapeHtml(p.metric)}</td>` +
        `<td>${p.defaultValue.toFixed(2)}</td><td>${p.ucxValue.toFixed(2)}</td><td>${pct(p.diffPct)}</td>` +
        `<td class="${p.regressionPct === null ? '' : p.regressionPct > 0 ? 'worse' : 'better'}">${pct(p.regressionPct, true)}</td><td class="${p.status.toLowerCase()}">${p.status}</td></tr>`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Backend comparison: ${escapeHtml(c.defaultBackend)} (default) vs UCX</title>
<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:6px;text-align:left}
th{background:#333;color:#fff}.name{font-family:monospace;font-size:12px;word-break:break-all}.fail{color:#fff;background:#c62828}.pass{color:#fff;background:#2e7d32}
.worse{color:#c62828;font-weight:bold}.better{color:#2e7d32;font-weight:bold}</style></head><body>
<h1>Backend comparison: ${escapeHtml(c.defaultBackend)} (default) vs UCX</h1>
<p>Threshold ${c.threshold}%: a pair fails when the default backend is slower than UCX by more than that. Positive change = the default backend is slower.</p>
<p>${c.pairs.length} pair(s): ${c.pairs.length - failed} pass, ${failed} fail; ${c.singleBackendSkipped} single-backend case(s) skipped.</p>
<table><thead><tr><th>default (${escapeHtml(c.defaultBackend)})</th><th>UCX</th><th>metric</th><th>default value</th><th>UCX value</th><th>difference</th><th>regression / improvement</th><th>status</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<p>Generated ${generated.toISOString()}</p>
</body></html>
`;
}
