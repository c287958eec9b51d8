// Numbers as the report's tables print them.
import type { Metric } from '../../metrics/metric.ts';
import { belowResolution, belowResolutionText } from '../../metrics/resolution.ts';

/** Integers as they are; others with 4 significant digits, or 2 decimals from 100 up. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(2) : String(Number(value.toPrecision(4)));
}

/** 0.052 -> '+5.2%'; null (a baseline of 0) -> 'n/a'. */
export function formatChange(change: number | null): string {
  if (change === null) return 'n/a';
  const percent = change * 100;
  return `${percent > 0 ? '+' : ''}${percent.toFixed(Math.abs(percent) < 10 ? 1 : 0)}%`;
}

/** A metric's value as the tables print it: `<0.01` when it was printed rounded to zero (resolution.ts). */
export function formatMetricValue(metric: Pick<Metric, 'value' | 'rounded'>): string {
  return belowResolution(metric) ? belowResolutionText(metric) : formatNumber(metric.value);
}
