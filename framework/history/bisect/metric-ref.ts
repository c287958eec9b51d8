// How a bisection names the figure it follows: a metric name, with its labels when the test yields
// it for several (`SERVER_MEDIAN_TTFT[concurrency=8]`), as `history regressions` prints them.
import { UsageError } from '../../../runners/common/errors.ts';

export interface MetricRef {
  name: string;
  /** Undefined: the metric's only label set. */
  labels?: Record<string, string | number>;
}

const labelValue = (raw: string) => (/^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw);

export function parseMetricRef(text: string): MetricRef {
  const match = /^([^[\]\s]+)(?:\[([^\]]*)\])?$/.exec(text.trim());
  if (!match) throw new UsageError(`--metric ${JSON.stringify(text)}: expected NAME or NAME[label=value,...], e.g. SERVER_MEDIAN_TTFT[concurrency=8]`, 'metric');
  if (match[2] === undefined) return { name: match[1] };
  const labels: Record<string, string | number> = {};
  for (const pair of match[2].split(',').filter((p) => p.trim() !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--metric ${JSON.stringify(text)}: label '${pair}' is not label=value`, 'metric');
    labels[pair.slice(0, eq).trim()] = labelValue(pair.slice(eq + 1).trim());
  }
  return { name: match[1], labels };
}
