// Figures a tool printed rounded (`Throughput: 0.00 GB/s` from a `.2f`): the step they were
// rounded to is kept on the metric (Metric.rounded) so that nothing reads a rounded-away figure as
// a measurement. A value smaller than its step printed as zero: the truth lies anywhere below half
// a step, so it is no measurement at all. Charts leave it out, the digest shows `<0.01` with no
// change, and the regression gate neither judges it nor lets it into a baseline.
import type { Metric } from './metric.ts';

/** The step of a printed decimal: '42.88' -> 0.01, '519.3' -> 0.1, '12' -> 1; undefined for what is no plain decimal. */
export function printedStep(printed: string): number | undefined {
  const m = /^[-+]?\d+(?:\.(\d+))?$/.exec(printed.trim());
  if (!m) return undefined;
  const decimals = m[1]?.length ?? 0;
  return Number((10 ** -decimals).toFixed(decimals));
}

/** The value was printed rounded to zero: no measurement. */
export function belowResolution(metric: Pick<Metric, 'value' | 'rounded'>): boolean {
  return metric.rounded !== undefined && Math.abs(metric.value) < metric.rounded / 2;
}

/** How a below-resolution value reads: '<0.01' (its step, 2 significant digits), never '0'. */
export function belowResolutionText(metric: Pick<Metric, 'rounded'>): string {
  return `<${Number((metric.rounded ?? 0).toPrecision(2))}`;
}
