// The accuracy pass rule: a one-sided hypothesis test against the expected score.
//   threshold% = expected% + z(alpha) * sqrt(2 * sigma^2 / n)      (higher is better)
//   threshold% = expected% - z(alpha) * sqrt(2 * sigma^2 / n)      (lower is better)
// z = the inverse normal CDF (z(0.05) = -1.645, so the threshold sits below the expectation).
// theta = -(z(alpha) + z(beta)) * scale is the smallest drop the test detects with power 1 - beta;
// it is reported, not used for the verdict. Every run of every configured dataset must pass.
import type { Metric } from './metric.ts';
import { ACCURACY_METRIC } from './extractors/lm-eval.ts';
import { InputError } from '../../runners/common/errors.ts';

export interface HypothesisParams {
  alpha: number;
  beta: number;
  /** Standard deviation of one sample's score, in percentage points. */
  sigma: number;
  numSamples: number;
  higherIsBetter: boolean;
}

const params = (alpha: number, sigma: number, numSamples: number, higherIsBetter = true): HypothesisParams => ({
  alpha,
  beta: 0.2,
  sigma,
  numSamples,
  higherIsBetter,
});

/** Per dataset (lower-case name): the defaults of the reference's table. */
export const DATASET_DEFAULTS: Readonly<Record<string, HypothesisParams>> = {
  gsm8k: params(0.05, 50, 1319),
  mmlu: params(0.05, 50, 4096),
  humaneval: params(0.002, 15.08, 164),
  cnn_dailymail: params(0.002, 11.06, 512),
  gpqa_diamond: params(0.05, 50, 198),
  json_mode_eval: params(0.05, 50, 100),
  mmmu: params(0.05, 50, 900),
  passkey_retrieval_64k: params(0.5, 0, 20),
  passkey_retrieval_128k: params(0.5, 0, 20),
  zero_scrolls: params(0.002, 6.97, 80),
  'slimpajama-6b': params(0.01, 4.48, 86, false),
};

export const UNKNOWN_DATASET_DEFAULTS: HypothesisParams = params(0.05, 50, 1000);

// Wichura's AS241 (PPND16), accurate to about 1e-16: rational approximations in three regions.
const A = [3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125, 45921.953931549871457, 67265.770927008700853, 33430.575583588128105, 2509.0809287301226727];
const B = [1, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077, 21213.794301586595867, 39307.89580009271061, 28729.085735721942674, 5226.495278852854561];
const C = [1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504, 1.27045825245236838258, 0.24178072517745061177, 0.0227238449892691845833, 7.7454501427834140764e-4];
const D = [1, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455, 0.14810397642748007459, 0.0151986665636164571966, 5.475938084995344946e-4, 1.05075007164441684324e-9];
const E = [6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123, 0.026532189526576123093, 0.0012426609473880784386, 2.71155556874348757815e-5, 2.01033439929228813265e-7];
const F = [1, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525, 7.868691311456132591e-4, 1.8463183175100546818e-5, 1.4215117583164458887e-7, 2.04426310338993978564e-15];

const poly = (coefficients: number[], x: number) => coefficients.reduceRight((acc, c) => acc * x + c, 0);

/** The standard normal quantile: the z with P(Z <= z) = p. */
export function inverseNormalCdf(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new InputError(`inverseNormalCdf: p must lie in [0, 1], got ${p}`);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * poly(A, r)) / poly(B, r);
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let z: number;
  if (r <= 5) {
    r -= 1.6;
    z = poly(C, r) / poly(D, r);
  } else {
    r -= 5;
    z = poly(E, r) / poly(F, r);
  }
  return q < 0 ? -z : z;
}

function scale(p: HypothesisParams): number {
  return Math.sqrt((2 * p.sigma ** 2) / p.numSamples);
}

/** The pass threshold in percent for an expected score in percent. */
export function hypothesisThreshold(expectedPct: number, p: HypothesisParams): number {
  const shift = inverseNormalCdf(p.alpha) * scale(p);
  return p.higherIsBetter ? expectedPct + shift : expectedPct - shift;
}

/** theta: the smallest change (percentage points) detected with power 1 - beta. */
export function minimumDetectableEffect(p: HypothesisParams): number {
  return -(inverseNormalCdf(p.alpha) + inverseNormalCdf(p.beta)) * scale(p);
}

/** One entry of metadata.accuracy.datasets, as the YAML spells it. */
export interface AccuracyDatasetConfig {
  dataset_name?: string;
  /** Accepted as an alias of dataset_name (the Python version read this key). */
  name?: string;
  /** A fraction (0.9454) or a percentage (94.54); values <= 1 are read as fractions. */
  expected_value: number;
  /** Only 'hypothesis_test' (the default). */
  threshold_type?: string;
  /** lm-eval filter; default flexible-extract. */
  filter_type?: string;
  /** lm-eval metric column to use (exact_match, acc...); default exact_match if present, else the first. */
  metric?: string;
  alpha?: number;
  beta?: number;
  sigma?: number;
  num_samples?: number;
  higher_is_better?: boolean;
}

export interface AccuracyCheck {
  dataset: string;
  filter: string;
  run: number | string;
  passed: boolean;
  actualPct: number;
  expectedPct: number;
  thresholdPct: number;
  thetaPct: number;
  params: HypothesisParams;
  message: string;
}

export interface AccuracyEvaluation {
  passed: boolean;
  checks: AccuracyCheck[];
  /** Every failed check's message, plus datasets with no result or an unsupported rule. */
  failures: string[];
}

const toPercent = (v: number) => (v <= 1 ? v * 100 : v);
const pct = (v: number) => `${v.toFixed(2)}%`;

/** Dataset parameters: the config's own values over the dataset's defaults. */
export function hypothesisParamsFor(config: AccuracyDatasetConfig): HypothesisParams {
  const name = (config.dataset_name ?? config.name ?? '').toLowerCase();
  const defaults = DATASET_DEFAULTS[name] ?? UNKNOWN_DATASET_DEFAULTS;
  return {
    alpha: config.alpha ?? defaults.alpha,
    beta: config.beta ?? defaults.beta,
    sigma: config.sigma ?? defaults.sigma,
    numSamples: config.num_samples ?? defaults.numSamples,
    higherIsBetter: config.higher_is_better ?? defaults.higherIsBetter,
  };
}

function checkRun(dataset: string, filter: string, metric: Metric, config: AccuracyDatasetConfig): AccuracyCheck {
  const p = hypothesisParamsFor(config);
  const expectedPct = toPercent(config.expected_value);
  const actualPct = metric.unit === '%' ? metric.value : metric.value * 100;
  const thresholdPct = hypothesisThreshold(expectedPct, p);
  const thetaPct = minimumDetectableEffect(p);
  const passed = p.higherIsBetter ? actualPct >= thresholdPct : actualPct <= thresholdPct;
  const op = p.higherIsBetter ? (passed ? '>=' : '<') : passed ? '<=' : '>';
  const run = metric.labels.run ?? 1;
  const message =
    `${dataset} (${filter}) run ${run}: actual ${pct(actualPct)} ${op} threshold ${pct(thresholdPct)} ` +
    `[expected ${pct(expectedPct)}, alpha ${p.alpha}, beta ${p.beta}, sigma ${p.sigma}, n ${p.numSamples}, ` +
    `${p.higherIsBetter ? 'higher' : 'lower'} is better, theta ${pct(thetaPct)}]: ${passed ? 'pass' : 'FAIL'}`;
  return { dataset, filter, run, passed, actualPct, expectedPct, thresholdPct, thetaPct, params: p, message };
}

/** Judges every run of every configured dataset from the ACCURACY metrics (lm-eval extractor). */
export function evaluateAccuracy(metrics: Metric[], datasets: AccuracyDatasetConfig[]): AccuracyEvaluation {
  const checks: AccuracyCheck[] = [];
  const failures: string[] = [];
  const accuracy = metrics.filter((m) => m.name === ACCURACY_METRIC);
  if (datasets.length === 0) failures.push('no accuracy datasets configured (metadata.accuracy.datasets is empty)');

  for (const config of datasets) {
    const dataset = config.dataset_name ?? config.name ?? '';
    const filter = config.filter_type ?? 'flexible-extract';
    const ruleType = config.threshold_type ?? 'hypothesis_test';
    if (ruleType !== 'hypothesis_test') {
      failures.push(`${dataset}: threshold_type '${ruleType}' is not supported (only hypothesis_test)`);
      continue;
    }
    const ofDataset = accuracy.filter((m) => String(m.labels.dataset).toLowerCase() === dataset.toLowerCase());
    const ofFilter = ofDataset.filter((m) => m.labels.filter === filter);
    if (ofFilter.length === 0) {
      const found = ofDataset.length
        ? `filters found: ${[...new Set(ofDataset.map((m) => m.labels.filter))].join(', ')}`
        : `datasets found: ${[...new Set(accuracy.map((m) => m.labels.dataset))].join(', ') || 'none'}`;
      failures.push(`${dataset} (${filter}): no result in the accuracy log (${found})`);
      continue;
    }
    const lmMetrics = [...new Set(ofFilter.map((m) => m.labels.metric))];
    const chosen = config.metric ?? (lmMetrics.includes('exact_match') ? 'exact_match' : lmMetrics[0]);
    const rows = ofFilter.filter((m) => m.labels.metric === chosen);
    if (rows.length === 0) {
      failures.push(`${dataset} (${filter}): no '${chosen}' value (metrics found: ${lmMetrics.join(', ')})`);
      continue;
    }
    for (const row of rows) {
      const check = checkRun(dataset, filter, row, config);
      checks.push(check);
      if (!check.passed) failures.push(check.message);
    }
  }
  return { passed: failures.length === 0, checks, failures };
}
