// The digest's words for the robust gate's verdicts: the change in the metric's own terms (a
// latency up is +, as "vs previous" says it), the gate's word (REGRESSED, ALERT <id>, suspect), why
// a figure is not judged, and the alerts still open. Built in memory: no file, no store.
import { describe, expect, it } from 'vitest';
import { buildDigest } from '../../framework/results/digest/digest.ts';
import { digestMarkdown, digestTerminal } from '../../framework/results/digest/digest-text.ts';
import type { RegressionFinding, TestRecord } from '../../framework/results/json.ts';
import { describeFinding } from '../../framework/history/regression.ts';

const at = new Date(Date.UTC(2026, 11, 1, 12)).toISOString();
const ttft = { name: 'TTFT', value: 30, unit: 'ms', higherIsBetter: false, labels: {} };
const finding = (over: Partial<RegressionFinding>): RegressionFinding => ({ metric: 'TTFT', labels: {}, unit: 'ms', value: 30, baseline: 20, threshold: 0.05, diffPercent: -50, regression: false, days: 8, gated: true, rule: 'robust', change: 0.5, scale: 0.02, runs: 8, ...over });
const record = (testId: string, f: RegressionFinding): TestRecord => ({
  testId, type: 'disagg', category: 'perf', configPath: `c/${testId}.yaml`, jobId: '1', verdict: 'passed', failures: [], metrics: [ttft],
  headline: [{ name: 'TTFT', labels: {} }], timing: { start: at, end: at, durationSec: 1 }, host: 'h', run: { id: 'r', kind: 'post-merge' },
  regression: { mode: 'warn', findings: [f] },
});

describe('the digest and the robust gate', () => {
  const digest = buildDigest({
    runId: 'r',
    tests: [
      { testId: 'new', record: record('new', finding({ status: 'regression', regression: true, alertId: 'a11111111', firstRunId: 'r' })) },
      { testId: 'open', record: record('open', finding({ status: 'still-regressed', regression: true, alertId: 'a22222222', firstRunId: 'q' })) },
      { testId: 'maybe', record: record('maybe', finding({ status: 'suspect', change: 0.09, value: 21.8 })) },
      { testId: 'young', record: record('young', finding({ status: 'unjudged', runs: 3, note: '3 of 5 baseline run(s): not judged yet' })) },
    ],
    files: { results: 'results.json', summaryMd: 'summary.md', summaryJson: 'summary.json' },
    openAlerts: ['a33333333  other BW: -20.0% against 10 GB/s ...; open'],
  });
  const text = digestTerminal(digest);
  const row = (id: string) => text.split('\n').find((l) => l.startsWith('PASSED') && l.includes(` ${id} `)) ?? '';
  it('states each change as the metric moved, with the gate\'s word', () => {
    expect(row('new')).toMatch(/\+50\.0% REGRESSED/);
    expect(row('open')).toMatch(/\+50\.0% ALERT a22222222/);
    expect(row('maybe')).toMatch(/\+9\.0% suspect/);
    expect(row('young')).toMatch(/not judged \(3 of 5 baseline run\(s\)\)/);
  });
  it('lists the regressions with their alert, and the alerts still open elsewhere', () => {
    expect(text).toMatch(/REGRESSION new: TTFT 30 ms against its level 20 ms \(\+50\.0%, noise 2\.0%, threshold 5\.0%, 8 post-merge run\(s\)\): alert a11111111 opened; reported/);
    expect(text).toMatch(/REGRESSION open: .*alert a22222222 still open/);
    expect(text).toMatch(/^OPEN ALERT a33333333 {2}other BW/m);
    expect(text).toMatch(/4 test\(s\): 4 passed, 0 failed, 0 skipped, 2 regressed/);
    expect(digestMarkdown(digest)).toMatch(/## Open alerts[\s\S]*a33333333/);
  });
});

describe('what a quiet verdict rules out', () => {
  const judged = (testId: string, oneRun: number | null, byTwoRuns: number | null, gated = true) =>
    ({ testId, record: record(testId, finding({ status: 'ok', change: 0.01, value: 20.2, gated, detectable: { power: 0.95, oneRun, byTwoRuns } })) });
  const files = { results: 'results.json', summaryMd: 'summary.md', summaryJson: 'summary.json' };

  it('says the median sizes the gate catches and the figure it sees least well, from the gating figures alone', () => {
    const digest = buildDigest({
      runId: 'r',
      tests: [judged('a', 0.14, 0.1), judged('b', 0.16, 0.11), judged('c', 0.3, 0.2), judged('shown', 0.9, 0.9, false), { testId: 'young', record: record('young', finding({ status: 'unjudged' })) }],
      files,
    });
    expect(digest.gateSensitivity).toMatchObject({ figures: 3, medianOneRun: 0.16, medianByTwoRuns: 0.11, blind: 0, least: { testId: 'c', oneRun: 0.3, byTwoRuns: 0.2 } });
    expect(digestTerminal(digest)).toMatch(/^gate sensitivity: the worsening caught 95 % of the time, median of 3 judged gating figure\(s\): 16\.0% on its first run, 11\.0% by its second; least sensitive: c TTFT \(catches 30\.0% on one run, 20\.0% by two\)$/m);
    expect(digestMarkdown(digest)).toMatch(/## Gate sensitivity\n\n- the worsening caught 95 % of the time, median of 3/);
  });

  it('counts the figures no worsening alerts on, and says nothing where no figure was judged', () => {
    const blind = buildDigest({ runId: 'r', tests: [judged('a', 0.14, 0.1), judged('wild', null, 0.4), judged('loud', null, null)], files });
    expect(blind.gateSensitivity).toMatchObject({ medianOneRun: null, medianByTwoRuns: 0.4, blind: 1, least: { testId: 'loud' } });
    expect(digestTerminal(blind)).toMatch(/: none on its first run, 40\.0% by its second; least sensitive: loud TTFT \(catches none on one run, none by two\); 1 figure\(s\) too noisy for any worsening to alert/);
    const none = buildDigest({ runId: 'r', tests: [{ testId: 'young', record: record('young', finding({ status: 'unjudged' })) }], files });
    expect(none.gateSensitivity).toBeUndefined();
    expect(digestTerminal(none)).not.toMatch(/gate sensitivity/);
  });

  it('names each figure\'s own sizes in `history regressions --all`', () => {
    const line = describeFinding('t', finding({ status: 'ok', change: 0.01, value: 20.2, detectable: { power: 0.95, oneRun: null, byTwoRuns: 0.101 } }));
    expect(line).toMatch(/noise 2\.0%, 8 run\(s\), catches none on one run, 10\.1% by two:/);
    expect(describeFinding('t', finding({ status: 'ok' }))).not.toMatch(/catches/);
  });
});
