// `disagg-bench history bisect TEST --metric M --good G --bad B [--repeat N] [--refs A,B | --images A,B]`:
// names the first commit (or ref, or container image) at which a test's metric went bad, rerunning
// the test at the candidates between a good and a bad state (framework/history/bisect/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bisect, fixed, roughSteps, type BisectPlan, type BisectResult, type Candidate } from '../../history/bisect/bisect.ts';
import { parseMetricRef, type MetricRef } from '../../history/bisect/metric-ref.ts';
import { describeReference, runReference, valuesReference, type End, type Reference } from '../../history/bisect/references.ts';
import { commitOf, commitsBetween, describeCommit, repositoryOf, StepWorktree, type Repository } from '../../history/bisect/revisions.ts';
import { labelsText, StepRun } from '../../history/bisect/step-run.ts';
import { mean } from '../../history/bisect/step-verdict.ts';
import { metricThresholds } from '../../metrics/regression-thresholds.ts';
import { testType } from '../../types/registry.ts';
import { testTypeNames } from '../../contract/names.ts';
import { runOption } from '../../run/options.ts';
import { maxOf } from '../../../runners/common/stats.ts';
import { EXIT_OK, signalExitCode } from '../../../runners/common/exit-codes.ts';
import type { Settings } from '../../settings.ts';
import { historySettings, onStore, parseOptions, percentOption, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history bisect TEST_ID --metric NAME[LABELS] --good G --bad B [--repeat N] [--refs A,B,...|--images A,B,...] [--scheduler NAME] [--threshold PCT] [--output DIR] [--json]
  Names the first commit at which TEST_ID's metric went bad: reruns the test (disagg-bench run, on
  the local or SLURM scheduler) at the commits between a good and a bad state, halving the range
  at each step as git bisect does, and judges each step by the regression gate's rule: bad when its
  mean is worse than the good values' mean beyond the threshold and by more than
  DISAGG_GATE_NOISE_K (2.75) standard deviations of the run-to-run noise (the pooled spread of the
  good, bad and step values' repeats). The repository of WORK_DIR is left as it was: the steps
  check out their commits in a work tree of their own in a temporary folder, removed at the end.
  --good G, --bad B  a run of the history (id, label, latest, previous): its value and those of the
                     history's other runs at the same commit; or values measured elsewhere,
                     REF:V1,V2,... (REF a commit or ref; with --images, an image)
  --metric NAME      the metric; NAME[label=value,...] when the test yields it for several label sets
  --repeat N         runs per step (default 1); their spread joins the noise
  --refs A,B,...     the candidates, in order, instead of the commits from good to bad
  --images A,B,...   container images, in order (CONTAINER_IMAGE of each step's run): only for test
                     types whose jobs run in the config's container image
  --scheduler NAME   the steps' scheduler (default: SCHEDULER, else slurm when sbatch is on PATH)
  --threshold PCT    the threshold (default: the config's post-merge one, DISAGG_REGRESSION_THRESHOLD, else 5)
  --output DIR       keep each step's run folders under DIR (default: a temporary folder, removed)
  --json             the result as one JSON document
  Exit 0 with the first bad candidate named, or none found; 2 on a usage error; 1 on an error.
  Ctrl-C or SIGTERM stops the step's run (its jobs cancelled) and removes the work tree.`;

const OPTIONS = {
  metric: { type: 'string' },
  good: { type: 'string' },
  bad: { type: 'string' },
  repeat: { type: 'string' },
  refs: { type: 'string' },
  images: { type: 'string' },
  scheduler: { type: 'string' },
  threshold: { type: 'string' },
  output: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required\n${usage}`, name);
  return value;
}

const list = (text: string | undefined) => (text ?? '').split(',').map((s) => s.trim()).filter(Boolean);

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, OPTIONS, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length !== 1) throw new UsageError(`name one test id (got ${positionals.length})\n${usage}`);
  const testId = positionals[0];
  const metric = parseMetricRef(required(values, 'metric'));
  const [goodText, badText] = [required(values, 'good'), required(values, 'bad')];
  if (goodText.trim() === badText.trim()) throw new UsageError(`--good and --bad are both '${goodText}': name a good and a different, bad state`, 'bad');
  const repeat = Number(values.repeat ?? '1');
  if (!Number.isInteger(repeat) || repeat < 1) throw new UsageError(`--repeat ${JSON.stringify(values.repeat)}: expected a whole number of runs per step >= 1`, 'repeat');
  if (values.refs !== undefined && values.images !== undefined) throw new UsageError('--refs and --images are two ways to list the candidates: give one', 'images');
  // The steps' `disagg-bench run --scheduler` would refuse it at every step: refused once, here.
  const schedulerProblem = values.scheduler !== undefined ? runOption('scheduler')?.check?.(values.scheduler) : undefined;
  if (schedulerProblem) throw new UsageError(`--scheduler ${JSON.stringify(values.scheduler)}: ${schedulerProblem}`, 'scheduler');
  const settings = historySettings();

  const [good, bad] = await references(settings, [['good', goodText], ['bad', badText]], testId, metric);
  const type = good.testType ?? bad.testType ?? typeOfTestId(testId);
  const higherIsBetter = good.higherIsBetter ?? bad.higherIsBetter ?? mean(bad.values) < mean(good.values);
  const threshold = values.threshold !== undefined
    ? percentOption('threshold', values.threshold, 5) / 100
    : good.threshold ?? bad.threshold ?? metricThresholds(undefined, metric.name, settings.history.thresholdPercent).postMerge;

  const scratch = mkdtempSync(path.join(tmpdir(), 'disagg-bisect-'));
  let worktree: StepWorktree | undefined;
  const runner = new StepRun();
  let signal: NodeJS.Signals | undefined;
  const onSignal = (s: NodeJS.Signals) => {
    if (signal) return;
    signal = s;
    process.stderr.write(`bisect: ${s}: stopping the step's run, then removing the work tree\n`);
    runner.stop(s);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  try {
    const candidates = candidatesOf(values, settings, good, bad, type);
    const repo = candidates.repo;
    if (repo && candidates.list.length > 0) worktree = StepWorktree.create(repo, path.join(scratch, 'tree'), candidates.list[0].commit!);
    const plan: BisectPlan = {
      testId,
      testType: type,
      metric,
      good,
      bad,
      higherIsBetter,
      rule: { threshold, noiseK: settings.history.gate.noiseK, ...roundedOf(good, bad) },
      candidates: candidates.list,
      lastIsBad: candidates.lastIsBad,
      repeat,
      outputRoot: values.output ? path.resolve(values.output) : path.join(scratch, 'runs'),
      env: {
        ...(values.scheduler ? { SCHEDULER: values.scheduler } : {}),
        ...(!process.env.GPU_TYPE && (good.gpuType ?? bad.gpuType) ? { GPU_TYPE: (good.gpuType ?? bad.gpuType)! } : {}),
      },
      prepare: (c): Record<string, string> => {
        if (c.image) return { CONTAINER_IMAGE: c.image, DISAGG_FORCE_ENV: [process.env.DISAGG_FORCE_ENV, 'CONTAINER_IMAGE'].filter(Boolean).join(',') };
        worktree!.checkout(c.commit!);
        return { WORK_DIR: worktree!.workDir };
      },
    };
    const progress = (line: string) => process.stderr.write(`bisect: ${line}\n`);
    progress(`${testId} ${metric.name}${metric.labels ? labelsText(metric.labels) : ''} (${higherIsBetter ? 'higher' : 'lower'} is better, threshold ${(threshold * 100).toFixed(2)}%, k ${settings.history.gate.noiseK})`);
    progress(describeReference(good, metric));
    progress(describeReference(bad, metric));
    progress(`${plan.candidates.length} candidate(s), roughly ${roughSteps(plan.lastIsBad ? plan.candidates.length - 1 : plan.candidates.length)} step(s) of ${repeat} run(s)`);
    const result = await bisect(plan, runner, progress, () => signal);
    report(plan, result, Boolean(values.json));
    return result.interrupted ? signalExitCode(result.interrupted) : EXIT_OK;
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    try {
      worktree?.remove();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

/** Both ends; the store is opened only when one of them names a run. */
async function references(settings: Settings, ends: [End, string][], testId: string, metric: MetricRef): Promise<Reference[]> {
  const given = ends.map(([end, text]) => valuesReference(end, text));
  if (given.every(Boolean)) return given as Reference[];
  // One end after the other: the session closes the store as soon as its function settles.
  const refs = await onStore(settings, async (store) => {
    const found: Reference[] = [];
    for (const [k, [end, text]] of ends.entries()) found.push(given[k] ?? (await runReference(store, end, text, testId, metric)));
    return found;
  }).catch((error: Error) => {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--good/--bad name runs of the history, but ${error.message}`, 'good');
  });
  if (refs[0].runIds.length && refs[0].runIds[0] === refs[1].runIds[0]) throw new UsageError(`--good and --bad name the same run (${refs[0].runIds[0]})`, 'bad');
  return refs;
}

/** The test type a test id starts with (`<type>_<category>_<stem>`). */
function typeOfTestId(testId: string): string {
  const type = [...testTypeNames].sort((a, b) => b.length - a.length).find((name) => testId.startsWith(`${name}_`));
  if (!type) throw new UsageError(`test id '${testId}' starts with no test type (${testTypeNames.join(', ')}): expected <type>_<category>_<config name>`);
  return type;
}

function candidatesOf(values: Record<string, unknown>, settings: Settings, good: Reference, bad: Reference, type: string): { list: Candidate[]; lastIsBad: boolean; repo?: Repository } {
  if (values.images !== undefined) {
    const why = imagesRefusal(type);
    if (why) throw new UsageError(`--images: ${why}`, 'images');
    const images = list(values.images as string);
    if (images.length === 0) throw new UsageError('--images: name at least one image', 'images');
    return { list: images.map((image) => ({ name: image, image })), lastIsBad: images.at(-1) === bad.ref };
  }
  const repo = repositoryOf(settings.workDir);
  const named = (commit: string): Candidate => {
    const c = describeCommit(repo, commit);
    return { name: `${c.short} ${c.subject}`, commit, subject: c.subject };
  };
  if (values.refs !== undefined) {
    const refs = list(values.refs as string);
    if (refs.length === 0) throw new UsageError('--refs: name at least one ref', 'refs');
    const commits = refs.map((ref) => commitOf(repo, ref, 'refs'));
    const badCommit = bad.ref ? tryCommit(repo, bad.ref) : undefined;
    return { list: commits.map(named), lastIsBad: badCommit !== undefined && commits.at(-1) === badCommit, repo };
  }
  const commitOfEnd = (r: Reference) => {
    if (!r.ref) throw new UsageError(`--${r.end} ${r.given}: the run recorded no git commit (WORK_DIR was not a git work tree when it ran): give --${r.end} COMMIT:V1,V2,...`, r.end);
    return commitOf(repo, r.ref, r.end);
  };
  const commits = commitsBetween(repo, commitOfEnd(good), commitOfEnd(bad));
  return { list: commits.map(named), lastIsBad: true, repo };
}

function tryCommit(repo: Repository, ref: string): string | undefined {
  try {
    return commitOf(repo, ref, 'bad');
  } catch {
    return undefined;
  }
}

/** Why a test type's jobs would not change with the container image, or undefined when they do. */
export function imagesRefusal(type: string): string | undefined {
  const definition = testType(type);
  if (!definition) return `'${type}' is no test type`;
  if (!definition.envOverrides.some((o) => o.env === 'CONTAINER_IMAGE')) {
    return `${type} tests have no container image setting (their jobs run this host's disagg-bench and libraries), so an image would change nothing; bisect commits or --refs instead`;
  }
  return undefined;
}

function report(plan: BisectPlan, result: BisectResult, json: boolean): void {
  const metric = `${plan.metric.name}${plan.metric.labels ? labelsText(plan.metric.labels) : ''}`;
  const found = result.firstBad;
  const reason = !result.regressed
    ? `the bad values are not a regression against the good ones by the gate's rule (${result.endsVerdict.diffPercent.toFixed(2)}%${result.endsVerdict.note ? `: ${result.endsVerdict.note}` : ''}): nothing to search`
    : result.interrupted
      ? `interrupted (${result.interrupted}) after ${result.steps.length} step(s)`
      : found
        ? undefined
        : 'no candidate measured bad: the bad values were not reproduced';
  if (json) {
    const candidate = (c: Candidate) => ({ name: c.name, ...(c.commit ? { commit: c.commit } : {}), ...(c.subject !== undefined ? { subject: c.subject } : {}), ...(c.image ? { image: c.image } : {}) });
    const end = (r: Reference) => ({ given: r.given, ref: r.ref ?? null, runs: r.runIds, values: r.values, mean: mean(r.values) });
    console.log(JSON.stringify({
      test: plan.testId,
      metric,
      higherIsBetter: plan.higherIsBetter,
      threshold: plan.rule.threshold,
      noiseK: plan.rule.noiseK,
      repeat: plan.repeat,
      good: end(plan.good),
      bad: end(plan.bad),
      candidates: plan.candidates.length,
      found: !!found,
      firstBad: found ? { ...candidate(found.candidate), values: found.values, mean: mean(found.values), fromBadValues: 'fromBadReference' in found } : null,
      maybe: result.maybe.map(candidate),
      steps: result.steps.map((s) => ({ step: s.step, ...candidate(s.candidate), values: s.values, verdict: s.verdict, mean: s.mean ?? null, diffPercent: s.diffPercent ?? null, ...(s.note ? { note: s.note } : {}) })),
      ...(reason ? { reason } : {}),
      ...(result.interrupted ? { interrupted: result.interrupted } : {}),
    }, null, 2));
    return;
  }
  if (found) {
    const values = found.values.map(fixed).join(', ');
    const how = 'fromBadReference' in found ? ' (by the bad values given; it was not measured again)' : '';
    console.log(`first bad: ${found.candidate.name}: ${metric} ${values} (mean ${fixed(mean(found.values))}) against good ${fixed(mean(plan.good.values))}${how}`);
    if (result.maybe.length) console.log(`  or one of the skipped candidates before it: ${result.maybe.map((c) => c.name).join('; ')}`);
  } else {
    console.log(`no bad candidate found: ${reason}`);
  }
  console.log(`${result.steps.length} step(s)${result.steps.length ? `: ${result.steps.map((s) => `${s.candidate.name.split(' ')[0]} ${s.verdict}`).join(', ')}` : ''}`);
}

/** The coarser step the ends' figures were printed rounded to, when either was (a change within it is no news). */
function roundedOf(...ends: Reference[]): { rounded?: number } {
  const steps = ends.flatMap((e) => (e.rounded !== undefined ? [e.rounded] : []));
  return steps.length > 0 ? { rounded: maxOf(steps) } : {};
}
