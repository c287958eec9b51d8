// A config's regression thresholds against the performance history (framework/history/):
//   benchmark:
//     regression:
//       SERVER_MEDIAN_TTFT: { threshold: 3 }                  # percent, whichever kind of run
//       SERVER_OUTPUT_TOKEN_THROUGHPUT: { post_merge: 2, pre_merge: 8 }
//       SERVER_DURATION: { check: false }                      # reported, never a regression
// Thresholds are percents > 0 (upstream's d_threshold_post_merge_* / d_threshold_pre_merge_*,
// fractions there). A metric without one uses DISAGG_REGRESSION_THRESHOLD, else upstream's
// defaults: 5 % post-merge, 10 % pre-merge (perf_regression_utils.py POST_MERGE_THRESHOLD,
// PRE_MERGE_THRESHOLD). `check: false` is upstream's regression_metrics subset the other way
// round: every metric with a direction is checked unless its config says not to.

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
}

interface RawEntry {
  threshold?: number;
  post_merge?: number;
  pre_merge?: number;
  check?: boolean;
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
