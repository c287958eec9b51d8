// The end-of-run table: one line per test and labelled metric group, the few numbers people check.
import type { Metric } from '../metrics/metric.ts';

export interface MetricsRow {
  id: string;
  state: string;
  jobState: string;
  metrics: Metric[];
}

const MAX_METRICS_PER_LINE = 4;

function labelText(labels: Record<string, string | number>): string {
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(' ');
}

function valueText(m: Metric): string {
  const abs = Math.abs(m.value);
  const digits = abs >= 100 ? 1 : abs >= 1 ? 2 : 4;
  return `${m.name}=${m.value.toFixed(digits)} ${m.unit}`;
}

export function formatMetricsTable(rows: MetricsRow[]): string {
  const lines = ['disagg-bench results', '-'.repeat(100)];
  for (const row of rows) {
    const verdict = row.state === 'passed' ? 'PASS' : row.state === 'skipped' ? 'SKIP' : row.state === 'not run' ? 'NOT RUN' : 'FAIL';
    lines.push(`${verdict}  ${row.id}  [job ${row.jobState}]`);
    const groups = new Map<string, Metric[]>();
    for (const m of row.metrics) {
      const key = labelText(m.labels);
      groups.set(key, [...(groups.get(key) ?? []), m]);
    }
    for (const [labels, metrics] of groups) {
      const shown = metrics.slice(0, MAX_METRICS_PER_LINE).map(valueText).join('  ');
      const more = metrics.length > MAX_METRICS_PER_LINE ? `  (+${metrics.length - MAX_METRICS_PER_LINE} more)` : '';
      lines.push(`      ${labels ? labels + ': ' : ''}${shown}${more}`);
    }
  }
  return lines.join('\n');
}
