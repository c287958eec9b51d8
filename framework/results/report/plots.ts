// Which plots a test's metrics make, decided from the metrics alone (names, labels, units), so a
// new test type gets plots without touching the report. Pure: records in, plot specs out.
//
// A metric that repeats over a label (a label with 2 or more distinct values among the test's
// points of that metric) becomes a series over that label: the label is the x axis. When several
// labels vary, the axis is the first of AXIS_PRIORITY present, else the first numeric one, else the
// first other; the remaining varying labels split the metric into several series.
//
//   axis label     what it is                                   chart  example metrics
//   block_size     transfer sweep: bandwidth, latency per size   line   BW_GBPS, AVG_LAT_US
//   concurrency    serving: latency, throughput per concurrency  line   SERVER_MEDIAN_TTFT, SERVER_OUTPUT_TOKEN_THROUGHPUT
//   pattern        sequential CT: latency vs isolated latency     bar    LATENCY_MS, ISOLATED_LATENCY_MS
//   rank           CT / EP: per-rank bandwidth                    bar    BW_GBPS
//   other numeric  a series over it                               line
//   other text     one bar per value                              bar
//
// One chart per (test record, axis, unit), so a y axis never mixes units: bandwidth and latency of
// a sweep are two charts, median TTFT and E2EL (both ms) share one. Unit 'count' is bookkeeping
// (requests, tokens) and is not plotted (the tests table lists it). Metrics that do not repeat
// are listed in the table only. A line chart whose values span more than LOG_SCALE_SPAN (a median
// TTFT of 200 ms beside an E2EL of 15 s, a sweep's 0.1 to 46 GB/s) gets a logarithmic y axis, so
// the small series do not lie flat on the floor.
import type { Metric } from '../../metrics/metric.ts';
import type { TestRecord } from '../json.ts';
import { metricKey } from './metric-key.ts';
import { belowResolution } from '../../metrics/resolution.ts';

export const AXIS_PRIORITY = ['block_size', 'concurrency', 'pattern', 'rank'] as const;
/** Identity-like labels: their values name things, so bars rather than a line through them. */
const BAR_AXES = new Set(['pattern', 'rank']);
const UNPLOTTED_UNITS = new Set(['count']);
/** More series than this start hidden (the legend shows them); medians stay visible first. */
export const MAX_VISIBLE_SERIES = 6;
export const LOG_SCALE_SPAN = 20;

const UNIT_QUANTITY: Record<string, string> = {
  ms: 'latency', us: 'latency', 'μs': 'latency', s: 'time',
  'GB/s': 'bandwidth', 'GiB/s': 'bandwidth', 'MB/s': 'bandwidth', 'MiB/s': 'bandwidth', 'Gb/s': 'bandwidth',
  'tok/s': 'throughput', 'req/s': 'throughput', fraction: 'accuracy', '%': 'percentage',
  B: 'size', bytes: 'size', KiB: 'size', MiB: 'size', GiB: 'size', GB: 'size',
};

export interface PlotSeries {
  name: string;
  metric: string;
  /** One value per x label, null where the series has no point. */
  values: (number | null)[];
  hidden: boolean;
  /** From the baseline results (drawn dashed). */
  baseline: boolean;
  /** Points drawn large (this run's point on a trend chart). */
  emphasis?: boolean;
}

export interface PlotSpec {
  id: string;
  testId: string;
  jobId: string | null;
  /** The label on the x axis. */
  axis: string;
  unit: string;
  chart: 'line' | 'bar';
  yScale: 'linear' | 'logarithmic';
  title: string;
  xLabels: string[];
  series: PlotSeries[];
}

const isNumeric = (v: string | number) => typeof v === 'number' || (v.trim() !== '' && Number.isFinite(Number(v)));

/** 4096 -> '4 KiB'; sizes are the one axis whose raw numbers people do not read at a glance. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let k = 0;
  while (Math.abs(value) >= 1024 && k < units.length - 1) {
    value /= 1024;
    k++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[k]}`;
}

function formatAxisValue(axis: string, value: string | number): string {
  return /size|bytes/i.test(axis) && isNumeric(value) ? formatBytes(Number(value)) : String(value);
}

/** Labels whose values differ among the points of one metric. */
function varyingLabels(points: Metric[]): string[] {
  const values = new Map<string, Set<string>>();
  for (const p of points) {
    for (const [k, v] of Object.entries(p.labels)) {
      if (!values.has(k)) values.set(k, new Set());
      values.get(k)!.add(String(v));
    }
  }
  // A label missing from some points varies too (present vs absent).
  return [...values].filter(([k, set]) => set.size > 1 || points.some((p) => !(k in p.labels))).map(([k]) => k);
}

function chooseAxis(points: Metric[], varying: string[]): string | undefined {
  const preferred = AXIS_PRIORITY.find((a) => varying.includes(a));
  if (preferred) return preferred;
  const numeric = varying.find((k) => points.every((p) => p.labels[k] === undefined || isNumeric(p.labels[k])));
  return numeric ?? varying[0];
}

interface Group {
  axis: string;
  unit: string;
  /** Series name -> the metric points of that series. */
  series: Map<string, { metric: string; points: Metric[] }>;
}

function groupMetrics(metrics: Metric[]): Group[] {
  const byName = new Map<string, Metric[]>();
  for (const m of metrics) {
    if (UNPLOTTED_UNITS.has(m.unit)) continue;
    byName.set(m.name, [...(byName.get(m.name) ?? []), m]);
  }
  const groups = new Map<string, Group>();
  for (const [name, points] of byName) {
    const varying = varyingLabels(points);
    const axis = chooseAxis(points, varying);
    if (!axis) continue;
    const others = varying.filter((k) => k !== axis);
    const unit = points[0].unit;
    const key = JSON.stringify([axis, unit]);
    if (!groups.has(key)) groups.set(key, { axis, unit, series: new Map() });
    const group = groups.get(key)!;
    for (const p of points) {
      if (p.labels[axis] === undefined) continue;
      const suffix = others.filter((k) => p.labels[k] !== undefined).map((k) => `${k}=${p.labels[k]}`).join(' ');
      const seriesName = suffix ? `${name} ${suffix}` : name;
      if (!group.series.has(seriesName)) group.series.set(seriesName, { metric: name, points: [] });
      group.series.get(seriesName)!.points.push(p);
    }
  }
  return [...groups.values()];
}

function axisValues(group: Group): (string | number)[] {
  const seen = new Map<string, string | number>();
  for (const { points } of group.series.values()) for (const p of points) seen.set(String(p.labels[group.axis]), p.labels[group.axis]);
  const values = [...seen.values()];
  // Numbers ascending; names (patterns...) in the order the test produced them.
  return values.every(isNumeric) ? values.sort((a, b) => Number(a) - Number(b)) : values;
}

/** Medians first, then the rest, up to MAX_VISIBLE_SERIES visible. */
function visibleSeries(names: string[]): Set<string> {
  if (names.length <= MAX_VISIBLE_SERIES) return new Set(names);
  const ordered = [...names.filter((n) => /MEDIAN/i.test(n)), ...names.filter((n) => !/MEDIAN/i.test(n))];
  return new Set(ordered.slice(0, MAX_VISIBLE_SERIES));
}

function yScaleFor(chart: 'line' | 'bar', series: PlotSeries[]): PlotSpec['yScale'] {
  const values = series.flatMap((s) => s.values).filter((v): v is number => v !== null);
  if (chart === 'bar' || values.some((v) => v <= 0)) return 'linear';
  return values.reduce((a, b) => Math.max(a, b), -Infinity) / values.reduce((a, b) => Math.min(a, b), Infinity) > LOG_SCALE_SPAN ? 'logarithmic' : 'linear';
}

function plotTitle(group: Group): string {
  const quantity = UNIT_QUANTITY[group.unit] ?? [...new Set([...group.series.values()].map((s) => s.metric))].join(', ');
  return `${quantity} vs ${group.axis.replace(/_/g, ' ')}${group.unit ? ` (${group.unit})` : ''}`;
}

/**
 * The plots of every record, in record order. With `baseline` (latest baseline record per test
 * id), each series gets a dashed twin from the baseline's metric with the same name and labels.
 */
export function planPlots(records: TestRecord[], baseline?: Map<string, TestRecord>): PlotSpec[] {
  const plots: PlotSpec[] = [];
  for (const record of records) {
    const before = baseline?.get(record.testId);
    const beforeValues = new Map((before?.metrics ?? []).filter((m) => !belowResolution(m)).map((m) => [metricKey(m), m.value]));
    for (const group of groupMetrics(record.metrics)) {
      const xs = axisValues(group);
      const index = new Map(xs.map((x, k) => [String(x), k]));
      const visible = visibleSeries([...group.series.keys()]);
      const series: PlotSeries[] = [];
      for (const [name, { metric, points }] of group.series) {
        const values: (number | null)[] = xs.map(() => null);
        const old: (number | null)[] = xs.map(() => null);
        for (const p of points) {
          const k = index.get(String(p.labels[group.axis]))!;
          // a figure printed rounded to zero (Metric.rounded) is no point on a curve: a gap
          values[k] = belowResolution(p) ? null : p.value;
          old[k] = beforeValues.get(metricKey(p)) ?? null;
        }
        // A series of nothing but zeros is a figure printed rounded below its resolution (a tool's
        // `0.00 GB/s`, from a log of an older version that kept no step), not a measurement: it is
        // not drawn (the tests table still lists the values).
        if (values.every((v) => v === null || v === 0)) continue;
        const hidden = !visible.has(name);
        series.push({ name, metric, values, hidden, baseline: false });
        if (old.some((v) => v !== null)) series.push({ name: `${name} (baseline)`, metric, values: old, hidden, baseline: true });
      }
      if (series.length === 0) continue; // every series all zeros: no chart of nothing
      const chart = BAR_AXES.has(group.axis) || !xs.every(isNumeric) ? 'bar' : 'line';
      plots.push({
        id: `plot-${plots.length + 1}`,
        testId: record.testId,
        jobId: record.jobId,
        axis: group.axis,
        unit: group.unit,
        chart,
        yScale: yScaleFor(chart, series),
        title: plotTitle(group),
        xLabels: xs.map((x) => formatAxisValue(group.axis, x)),
        series,
      });
    }
  }
  return plots;
}
