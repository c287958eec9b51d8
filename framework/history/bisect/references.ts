// The two ends of a bisection, `--good` and `--bad`: each a run of the history (its id or label,
// `latest`, `previous`) or values the user measured elsewhere, `REF:V1,V2,...` (REF a commit, a
// ref, or an image). A run's values are its own and those of every other run of the history at the
// same commit (the repeats of that state), of the same test, GPU type and config identity, that
// passed. An end the bisection can check out is measured again beside the steps and judged by
// those runs; the values given judge an end it cannot (bisect.ts). A value printed rounded to zero is
// no measurement: a run of it cannot be an end, and a repeat of it is left out (said once).
import type { HistoryStore, RunSummary } from '../store.ts';
import type { TestRecord } from '../../results/json.ts';
import { resolveRun } from '../run-ref.ts';
import { isValid } from '../rows.ts';
import { casePrefix } from '../series-key.ts';
import { UsageError } from '../../../runners/common/errors.ts';
import { labelsText, metricValueOf } from './step-run.ts';
import type { MetricRef } from './metric-ref.ts';

export type End = 'good' | 'bad';

export interface Reference {
  end: End;
  /** As the user gave it. */
  given: string;
  values: number[];
  /** The commit, ref or image the values were measured at (a run's: its recorded commit). */
  ref?: string;
  /** The runs whose values these are. */
  runIds: string[];
  higherIsBetter?: boolean;
  unit?: string;
  testType?: string;
  gpuType?: string;
  /** The post-merge threshold the run's config set for the metric (a fraction). */
  threshold?: number;
  /** The step the run's figure was printed rounded to (Metric.rounded). */
  rounded?: number;
  /** Runs at the same commit whose figure was printed rounded to zero: no measurement, left out. */
  unmeasuredRepeats?: number;
}

const NUMBER = String.raw`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`;
const VALUES_FORM = new RegExp(`^(.+):(${NUMBER}(?:,${NUMBER})*)$`);

/** `REF:V1,V2` as values given by the user; undefined for anything else (a run). */
export function valuesReference(end: End, given: string): Reference | undefined {
  const match = VALUES_FORM.exec(given.trim());
  if (!match) return undefined;
  return { end, given, ref: match[1], values: match[2].split(',').map(Number), runIds: [] };
}

/** The values of a run of the history (and of the other runs at its commit) for the test and metric. */
export async function runReference(store: HistoryStore, end: End, given: string, testId: string, metric: MetricRef): Promise<Reference> {
  const run = await resolveRun(given, async () => store).catch((error: Error) => {
    throw new UsageError(`--${end} ${JSON.stringify(given)}: ${error.message} (or give values measured elsewhere: --${end} COMMIT:V1,V2,...)`, end);
  });
  const record = run.records.find((r) => r.testId === testId);
  if (!record) {
    const held = run.records.map((r) => r.testId);
    throw new UsageError(`--${end} ${given}: run ${run.name} has no test ${testId} (it has ${held.slice(0, 5).join(', ') || 'none'}${held.length > 5 ? ', ...' : ''})`, end);
  }
  const own = metricValueOf(record, metric);
  if (own.value === undefined) throw new UsageError(`--metric: in run ${run.name}, ${testId} ${own.why}`, 'metric');
  if (!isValid(record)) throw new UsageError(`--${end} ${given}: ${testId} ${record.verdict} in run ${run.name}: its values do not stand`, end);
  const commit = record.run?.commit;
  const { repeats, unmeasured } = commit ? await repeatsAt(store, commit, record, metric) : { repeats: [], unmeasured: 0 };
  const unit = record.metrics.find((m) => m.name === metric.name)?.unit;
  return {
    end,
    given,
    ...(commit ? { ref: commit } : {}),
    values: [own.value, ...repeats.map((r) => r.value)],
    runIds: [record.run?.id ?? run.name, ...repeats.map((r) => r.runId)],
    ...(own.higherIsBetter !== undefined ? { higherIsBetter: own.higherIsBetter } : {}),
    ...(unit ? { unit } : {}),
    testType: record.type,
    ...(record.gpuType ? { gpuType: record.gpuType } : {}),
    ...(record.run?.thresholds?.[metric.name] ? { threshold: record.run.thresholds[metric.name].postMerge } : {}),
    ...(own.rounded !== undefined && { rounded: own.rounded }),
    ...(unmeasured > 0 && { unmeasuredRepeats: unmeasured }),
  };
}

/** The other runs' values of the same test case at the same commit. */
async function repeatsAt(store: HistoryStore, commit: string, record: TestRecord, metric: MetricRef): Promise<{ repeats: { runId: string; value: number }[]; unmeasured: number }> {
  const others = (await store.runs()).filter((r: RunSummary) => r.commit === commit && r.runId !== record.run?.id).map((r) => r.runId);
  const sameCase = casePrefix(record.testId, record.gpuType, record.run?.identity);
  const labels = metric.labels ?? record.metrics.find((m) => m.name === metric.name)?.labels;
  const records = (await store.records(others)).filter((r) => r.testId === record.testId && isValid(r) && casePrefix(r.testId, r.gpuType, r.run?.identity) === sameCase);
  const values = records.map((r) => ({ runId: r.run!.id, ...metricValueOf(r, { name: metric.name, ...(labels ? { labels } : {}) }) }));
  return {
    repeats: values.flatMap((v) => (v.value === undefined ? [] : [{ runId: v.runId, value: v.value }])),
    unmeasured: values.filter((v) => v.unmeasured).length,
  };
}

export const describeReference = (r: Reference, metric: MetricRef) =>
  `${r.end} ${r.ref ? r.ref.slice(0, 12) : r.given}: ${metric.name}${metric.labels ? labelsText(metric.labels) : ''} ${r.values.map((v) => String(v)).join(', ')}${r.runIds.length ? ` (run${r.runIds.length > 1 ? 's' : ''} ${r.runIds.join(', ')})` : ''}` +
  (r.unmeasuredRepeats ? `; ${r.unmeasuredRepeats} run(s) at the same commit left out: printed rounded to zero, no measurement` : '');
