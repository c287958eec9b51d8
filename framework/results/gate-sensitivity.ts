// What a run's quiet verdict rules out: the worsening the gate catches (with 95 % probability) in
// the median gating figure on its first run and by its second, and the figure it sees least well.
// summary.json keeps it; the digest, summary.md and `history regressions` print it under the
// verdict (digest-text.ts sensitivityText).
import type { RegressionFinding } from './json.ts';

export interface GateSensitivity {
  /** The chance the sizes are caught with (0.95), as the findings state it. */
  power: number;
  /** Gating figures the gate judged (with a stated size). */
  figures: number;
  /** Medians over them (fractions of the level); null: more than half are not caught at any size. */
  medianOneRun: number | null;
  medianByTwoRuns: number | null;
  /** The figure with the largest size by two runs (null sizes first). */
  least: { testId: string; metric: string; labels: RegressionFinding['labels']; oneRun: number | null; byTwoRuns: number | null };
  /** Figures no worsening short of the whole level alerts on, even over two runs. */
  blind: number;
}

/** A worsening the gate catches, as every view prints it: a percentage of the level, or `none` (no worsening short of the whole level alerts). */
export const caughtSizeText = (x: number | null) => (x === null ? 'none' : `${(x * 100).toFixed(1)}%`);

/** A figure's sizes in the words the digest, the report and `history regressions --all` share. */
export const caughtText = (oneRun: number | null, byTwoRuns: number | null) => `catches ${caughtSizeText(oneRun)} on one run, ${caughtSizeText(byTwoRuns)} by two`;

type Judged = Pick<RegressionFinding, 'metric' | 'labels' | 'gated' | 'detectable'> & { testId: string };

const asNumber = (x: number | null | undefined) => (x === null || x === undefined ? Infinity : x);

function median(xs: number[]): number | null {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const m = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return Number.isFinite(m) ? m : null;
}

export function gateSensitivity(findings: readonly Judged[]): GateSensitivity | undefined {
  const judged = findings.filter((f) => f.gated !== false && f.detectable);
  if (judged.length === 0) return undefined;
  const oneRun = judged.map((f) => asNumber(f.detectable!.oneRun));
  const byTwo = judged.map((f) => asNumber(f.detectable!.byTwoRuns));
  let worst = 0;
  for (let k = 1; k < judged.length; k++) if (byTwo[k] > byTwo[worst]) worst = k;
  const w = judged[worst];
  return {
    power: judged[0].detectable!.power,
    figures: judged.length,
    medianOneRun: median(oneRun),
    medianByTwoRuns: median(byTwo),
    least: { testId: w.testId, metric: w.metric, labels: w.labels, oneRun: w.detectable!.oneRun, byTwoRuns: w.detectable!.byTwoRuns },
    blind: byTwo.filter((x) => !Number.isFinite(x)).length,
  };
}
