// The end-of-run table: one line per test and labelled metric group, the few numbers people check.
import type { Metric } from '../metrics/metric.ts';
import { belowResolution, belowResolutionText } from '../metrics/resolution.ts';
import { STATE_WORDS, type EndState } from '../results/test-states.ts';

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

/** A whole number as it is (a count is no `4.00`), a figure printed rounded to zero as `<0.01`, others to 1-4 decimals. */
function valueText(m: Metric): string {
  if (belowResolution(m)) return `${m.name}${belowResolutionText(m)} ${m.unit}`;
  if (Number.isInteger(m.value)) return `${m.name}=${m.value} ${m.unit}`;
  const abs = Math.abs(m.value);
  const digits = abs >= 100 ? 1 : abs >= 1 ? 2 : 4;
  return `${m.name}=${m.value.toFixed(digits)} ${m.unit}`;
}

export function formatMetricsTable(rows: MetricsRow[]): string {
  const lines = ['disagg-bench results', '-'.repeat(100)];
  for (const row of rows) {
    // the words of the one vocabulary (results/test-states.ts); anything else failed
    const verdict = STATE_WORDS[(row.state === 'passed' || row.state === 'skipped' || row.state === 'not run' ? row.state : 'failed') as EndState].word;
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
