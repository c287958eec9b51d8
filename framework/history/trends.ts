// The data of the report's trend section (results/report/trends.ts draws it) for the records of
// one run: per test, the metrics its check found regressed, else its headline metric (the first
// checked metric that moved most, else the first latency, bandwidth or throughput it has), each
// with its values over time from the store, the baseline and threshold of the check, and this
// run's point. Regressions first; at most MAX_CHARTS charts.
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import type { TrendChart, TrendInput } from '../results/report/trends.ts';
import { caseKey, labelsKey } from './series-key.ts';
import type { HistoryStore } from './store.ts';

export const MAX_CHARTS = 40;
const HEADLINE_UNITS = ['ms', 'us', 'μs', 's', 'GB/s', 'GiB/s', 'tok/s', 'req/s'];

interface Pick {
  record: TestRecord;
  metric: string;
  labels: TestRecord['metrics'][number]['labels'];
  finding?: RegressionFinding;
}

function picksOf(record: TestRecord): Pick[] {
  const findings = record.regression?.findings ?? [];
  const regressed = findings.filter((f) => f.regression);
  if (regressed.length) return regressed.map((f) => ({ record, metric: f.metric, labels: f.labels, finding: f }));
  // the figure its type's users watch (TestType.headline), with its check when there was one
  const headline = record.headline?.[0];
  if (headline) {
    const finding = findings.find((f) => f.metric === headline.name && labelsKey(f.labels) === labelsKey(headline.labels));
    return [{ record, metric: headline.name, labels: headline.labels, finding }];
  }
  const moved = [...findings].sort((a, b) => a.diffPercent - b.diffPercent)[0];
  if (moved) return [{ record, metric: moved.metric, labels: moved.labels, finding: moved }];
  const guess = record.metrics.find((m) => m.higherIsBetter !== undefined && HEADLINE_UNITS.includes(m.unit));
  return guess ? [{ record, metric: guess.name, labels: guess.labels }] : [];
}

export async function trendsForRun(store: HistoryStore, records: TestRecord[]): Promise<TrendInput> {
  const picks = records.filter((r) => r.run).flatMap(picksOf);
  picks.sort((a, b) => Number(!!b.finding?.regression) - Number(!!a.finding?.regression));
  const chosen = picks.slice(0, MAX_CHARTS);
  if (chosen.length === 0) return { store: store.description, charts: [], note: 'No test of this run measured a metric with a direction.' };
  const points = await store.points({ testIds: [...new Set(chosen.map((p) => p.record.testId))] });
  const charts: TrendChart[] = chosen.map(({ record, metric, labels, finding }) => {
    const key = labelsKey(labels);
    const ownCase = caseKey({ testId: record.testId, gpuType: record.gpuType, identity: record.run?.identity, labels });
    const series = points.filter((p) => p.caseKey === ownCase && p.metric === metric);
    const own = record.metrics.find((m) => m.name === metric && labelsKey(m.labels) === key);
    const mine = series.filter((p) => p.runId === record.run!.id);
    // The run's own value, from the store when appended already, else from its record.
    const chartPoints = series.filter((p) => p.postMerge && p.valid && p.runId !== record.run!.id).map((p) => ({ tsMs: p.tsMs, value: p.value, runId: p.runId, current: false }));
    const ownPoint = mine[0] ?? (own ? { tsMs: Date.parse(record.timing.end), value: own.value, runId: record.run!.id } : undefined);
    if (ownPoint) chartPoints.push({ tsMs: ownPoint.tsMs, value: ownPoint.value, runId: ownPoint.runId, current: true });
    chartPoints.sort((a, b) => a.tsMs - b.tsMs);
    return {
      testId: record.testId,
      metric,
      labels,
      unit: own?.unit ?? finding?.unit ?? '',
      higherIsBetter: own?.higherIsBetter,
      points: chartPoints,
      ...(finding ? { baseline: finding.baseline, threshold: finding.threshold, diffPercent: finding.diffPercent } : {}),
      regression: !!finding?.regression,
      ...(own?.rounded !== undefined && { rounded: own.rounded }),
    };
  });
  return { store: store.description, charts };
}
