// What `history bisect` prints on stdout once it ends: one line with its answer (`first bad: ...`,
// `nothing to search: ...`, `no bad candidate found: ...`, `inconclusive: ...` naming what would
// decide it), then the steps and the runs it took; or, with --json, one document with the same facts.
import { fixed, type BisectPlan, type BisectResult, type Candidate } from '../../history/bisect/bisect.ts';
import { labelsText } from '../../history/bisect/step-run.ts';
import { mean } from '../../history/bisect/step-verdict.ts';

/** The answer's line. */
export function answerLine(plan: BisectPlan, result: BisectResult): string {
  const metric = `${plan.metric.name}${plan.metric.labels ? labelsText(plan.metric.labels) : ''}`;
  const o = result.outcome;
  const level = (values: number[]) => (values.length ? fixed(mean(values)) : '-');
  switch (o.kind) {
    case 'found':
      return `first bad: ${o.candidate.name}: ${metric} ${o.values.map(fixed).join(', ')} (mean ${fixed(mean(o.values))}) against good ${level(result.ends.good)} and bad ${level(result.ends.bad)}` +
        (o.maybe.length ? `\n  or one of the skipped candidates before it: ${o.maybe.map((c) => c.name).join('; ')}` : '');
    case 'nothing':
      return `nothing to search: ${o.why}`;
    case 'none':
      return `no bad candidate found: ${o.why}`;
    case 'inconclusive':
      return `inconclusive: ${o.why}; ${o.decide}`;
    case 'interrupted':
      return `interrupted (${o.signal}) after ${result.steps.length} step(s)`;
  }
}

export function report(plan: BisectPlan, result: BisectResult, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(document(plan, result), null, 2));
    return;
  }
  console.log(answerLine(plan, result));
  const steps = result.steps.map((s) => `${s.candidate.name.split(' ')[0]} ${s.verdict}`).join(', ');
  console.log(`${result.steps.length} step(s)${steps ? `: ${steps}` : ''}; ${result.runs} run(s) of the test`);
}

const candidate = (c: Candidate) => ({ name: c.name, ...(c.commit ? { commit: c.commit } : {}), ...(c.subject !== undefined ? { subject: c.subject } : {}), ...(c.image ? { image: c.image } : {}) });

function document(plan: BisectPlan, result: BisectResult) {
  const o = result.outcome;
  const end = (which: 'good' | 'bad') => {
    const r = plan[which];
    const values = result.ends[which];
    return { given: r.given, ref: r.ref ?? null, runs: r.runIds, values: r.values, measured: plan.endStates[which] ? values : null, mean: values.length ? mean(values) : null };
  };
  return {
    test: plan.testId,
    metric: `${plan.metric.name}${plan.metric.labels ? labelsText(plan.metric.labels) : ''}`,
    higherIsBetter: plan.higherIsBetter,
    threshold: plan.threshold,
    budget: plan.budget,
    good: end('good'),
    bad: end('bad'),
    ends: result.ends.verdict ? { verdict: result.ends.verdict.kind, diffPercent: result.ends.verdict.diffPercent, marginPercent: result.ends.verdict.marginPercent } : null,
    noise: result.noise,
    candidates: plan.candidates.length,
    outcome: o.kind,
    found: o.kind === 'found',
    firstBad: o.kind === 'found' ? { ...candidate(o.candidate), values: o.values, mean: mean(o.values) } : null,
    maybe: o.kind === 'found' ? o.maybe.map(candidate) : [],
    ...(o.kind === 'inconclusive' && { inconclusive: { why: o.why, decide: o.decide, after: o.after ? candidate(o.after) : null, upTo: o.upTo ? candidate(o.upTo) : null } }),
    ...(o.kind !== 'found' && { reason: answerLine(plan, result) }),
    ...(o.kind === 'interrupted' && { interrupted: o.signal }),
    steps: result.steps.map((s) => ({ step: s.step, ...candidate(s.candidate), values: s.values, verdict: s.verdict, mean: s.mean ?? null, position: s.position ?? null, ...(s.note ? { note: s.note } : {}) })),
    runs: result.runs,
  };
}
