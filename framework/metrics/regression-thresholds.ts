// A config's regression thresholds against the performance history (framework/history/):
//   benchmark:
//     regression:
//       SERVER_MEDIAN_TTFT: { threshold: 3 }                  # percent, whichever kind of run
//       SERVER_OUTPUT_TOKEN_THROUGHPUT: { post_merge: 2, pre_merge: 8 }
//       SERVER_DURATION: { check: false }                      # not compared at all
//       SERVER_MEDIAN_TPOT: { gate: true }                     # gates beside the headline metrics
//       SERVER_MEDIAN_ITL: { gate: false }                     # shown against its baseline, never fails
// Thresholds are percents > 0 (upstream's d_threshold_post_merge_* / d_threshold_pre_merge_*,
// fractions there). A metric without one uses DISAGG_REGRESSION_THRESHOLD, else upstream's
// defaults: 5 % post-merge, 10 % pre-merge (perf_regression_utils.py POST_MERGE_THRESHOLD,
// PRE_MERGE_THRESHOLD). Every metric with a direction is compared with its baseline unless
// `check: false`; only the gating ones (upstream's regression_metrics: by default each test type's
// headline metrics, framework/history/gate-metrics.ts) can fail a run; `gate` opts one in or out.

/** JSON Schema of `benchmark.regression`, shared by every test type's schema. */
export const regressionSchema = {
  type: 'object',
  propertyNames: { pattern: '^[A-Za-z0-9_.:/-]+$' },
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      threshold: { type: 'number', exclusiveMinimum: 0 },
      post_merge: { type: 'number', exclusiveMinimum: 0 },
      pre_merge: { type: 'number', exclusiveMinimum: 0 },
      check: { type: 'boolean' },
      gate: { type: 'boolean' },
    },
  },
} as const;

/** Upstream's defaults, as fractions. */
export const POST_MERGE_THRESHOLD = 0.05;
export const PRE_MERGE_THRESHOLD = 0.1;

export interface MetricThresholds {
  postMerge: number;
  preMerge: number;
  check: boolean;
  /** The config's own word on whether the metric gates; undefined: the run's setting decides. */
  gate?: boolean;
}

interface RawEntry {
  threshold?: number;
  post_merge?: number;
  pre_merge?: number;
  check?: boolean;
  gate?: boolean;
}

/**
 * The thresholds (fractions) of one metric: its own entry, else the run's global percent, else
 * upstream's defaults. `raw` is the config's `benchmark.regression` (already schema-checked).
 */
export function metricThresholds(raw: unknown, metric: string, globalPercent?: number): MetricThresholds {
  const entry = (raw && typeof raw === 'object' ? (raw as Record<string, RawEntry>)[metric] : undefined) ?? {};
  const global = globalPercent !== undefined ? globalPercent / 100 : undefined;
  const pct = (value: number | undefined) => (value !== undefined ? value / 100 : undefined);
  return {
    postMerge: pct(entry.post_merge) ?? pct(entry.threshold) ?? global ?? POST_MERGE_THRESHOLD,
    preMerge: pct(entry.pre_merge) ?? pct(entry.threshold) ?? global ?? PRE_MERGE_THRESHOLD,
    check: entry.check ?? true,
    ...(entry.gate !== undefined ? { gate: entry.gate } : {}),
  };
}

/** The metrics the config names, with their thresholds: what a record embeds for later runs and exports. */
export function configuredThresholds(raw: unknown, globalPercent?: number): Record<string, { postMerge: number; preMerge: number }> {
  if (!raw || typeof raw !== 'object') return {};
  return Object.fromEntries(
    Object.keys(raw).map((metric) => {
      const t = metricThresholds(raw, metric, globalPercent);
      return [metric, { postMerge: t.postMerge, preMerge: t.preMerge }];
    }),
  );
}
