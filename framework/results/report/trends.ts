// The report's trend charts: per test and headline metric, its values over time from the
// performance history, the baseline this run was checked against and its threshold limit, this
// run's point marked. The data comes from framework/history/trends.ts (the report does not reach
// the store itself); this file only turns it into plot specs the page script draws. Pure.
import type { Metric } from '../../metrics/metric.ts';
import { formatLabels } from './metric-key.ts';
import type { PlotSeries, PlotSpec } from './plots.ts';
import { belowResolution } from '../../metrics/resolution.ts';

export interface TrendPoint {
  tsMs: number;
  value: number;
  runId: string;
  /** This run's own value. */
  current: boolean;
}

export interface TrendChart {
  testId: string;
  metric: string;
  labels: Metric['labels'];
  unit: string;
  higherIsBetter?: boolean;
  points: TrendPoint[];
  /** The baseline this run's value was checked against (absent: no check, e.g. no earlier history). */
  baseline?: number;
  /** Fraction. */
  threshold?: number;
  /** Percent, positive = better. */
  diffPercent?: number;
  regression: boolean;
  /** The step this run's value was printed rounded to (Metric.rounded): values below it are no points. */
  rounded?: number;
}

export interface TrendInput {
  /** The store, as messages name it. */
  store: string;
  charts: TrendChart[];
  /** Why there is nothing to show, when there is not. */
  note?: string;
  /** Alerts still open in the history after this run, one line each (history alerts). */
  openAlerts?: string[];
}

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** The limit a value must not cross: baseline * (1 - t) for higher-is-better, * (1 + t) otherwise. */
export function thresholdLimit(chart: TrendChart): number | undefined {
  if (chart.baseline === undefined || chart.threshold === undefined || chart.higherIsBetter === undefined) return undefined;
  return chart.baseline * (chart.higherIsBetter ? 1 - chart.threshold : 1 + chart.threshold);
}

/** A point's value, or null where it was printed rounded to zero (no measurement). */
const measured = (chart: TrendChart, value: number) => (belowResolution({ value, rounded: chart.rounded }) ? null : value);

/** A chart with something to draw: at least one of its points is a measurement. */
export function hasMeasuredPoint(chart: TrendChart): boolean {
  return chart.points.some((p) => measured(chart, p.value) !== null);
}

/** The trend charts worth drawing: a series rounded to zero throughout is no chart (trend-section.ts lists the rest). */
export function drawableTrends(input: TrendInput): TrendInput {
  const charts = input.charts.filter(hasMeasuredPoint);
  return charts.length === input.charts.length ? input : { ...input, charts, ...(charts.length === 0 && { note: 'Every charted figure was printed rounded to zero: nothing to draw.' }) };
}

export function trendPlots(input: TrendInput): PlotSpec[] {
  return input.charts.map((chart, k) => {
    const flat = (v: number | undefined) => chart.points.map(() => v ?? null);
    const limit = thresholdLimit(chart);
    const series: PlotSeries[] = [
      { name: chart.metric, metric: chart.metric, values: chart.points.map((p) => measured(chart, p.value)), hidden: false, baseline: false },
      { name: 'this run', metric: chart.metric, values: chart.points.map((p) => (p.current ? measured(chart, p.value) : null)), hidden: false, baseline: false, emphasis: true },
    ];
    if (chart.baseline !== undefined) series.push({ name: 'baseline', metric: chart.metric, values: flat(chart.baseline), hidden: false, baseline: true });
    if (limit !== undefined) series.push({ name: `threshold ${((chart.threshold ?? 0) * 100).toFixed(1)}%`, metric: chart.metric, values: flat(limit), hidden: false, baseline: true });
    const labels = formatLabels(chart.labels);
    return {
      id: `trend-${k + 1}`,
      testId: chart.testId,
      jobId: null,
      axis: 'time (UTC)',
      unit: chart.unit,
      chart: 'line',
      yScale: 'linear',
      // titled by test and metric: a page of cards that all read SEND_TIME_S says nothing
      title: `${chart.regression ? 'REGRESSION: ' : ''}${chart.testId}: ${chart.metric}${labels ? ` (${labels})` : ''}`,
      xLabels: chart.points.map((p) => when(p.tsMs)),
      series,
    } satisfies PlotSpec;
  });
}
