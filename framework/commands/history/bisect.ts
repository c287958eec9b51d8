// `disagg-bench history bisect TEST --metric M --good G --bad B [--repeat N] [--max-step-runs N]
// [--max-runs N] [--refs A,B | --images A,B]`: names the first commit (or ref, or container image)
// at which a test's metric went bad, rerunning the test at the candidates between a good and a bad
// state (framework/history/bisect/), or says it cannot tell. What to search (test, metric, ends) is
// a BisectTarget: the command line's (targetOfArgs), or any other source's, given to bisectTarget
// with the rest of the options.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bisect, roughSteps, type BisectPlan, type Candidate } from '../../history/bisect/bisect.ts';
import { budgetProblem, DEFAULT_BUDGET, endRuns, type Budget } from '../../history/bisect/budget.ts';
import { metricDirection } from '../../history/bisect/direction.ts';
import { parseMetricRef, type MetricRef } from '../../history/bisect/metric-ref.ts';
import { describeReference, runReference, valuesReference, type End, type Reference } from '../../history/bisect/references.ts';
import { commitOf, commitsBetween, describeCommit, repositoryOf, StepWorktree, type Repository } from '../../history/bisect/revisions.ts';
import { labelsText, StepRun } from '../../history/bisect/step-run.ts';
import { ENDS_ALPHA, STEP_ALPHA } from '../../history/bisect/step-verdict.ts';
import { metricThresholds } from '../../metrics/regression-thresholds.ts';
import { testType } from '../../types/registry.ts';
import { testTypeNames } from '../../contract/names.ts';
import { runOption } from '../../run/options.ts';
import { maxOf } from '../../../runners/common/stats.ts';
import { signalExitCode } from '../../../runners/common/exit-codes.ts';
import type { Settings } from '../../settings.ts';
import { EXIT_INCONCLUSIVE, EXIT_OK } from '../support/exit-code.ts';
import { report } from './bisect-report.ts';
import { historySettings, onStore, parseOptions, percentOption, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history bisect (TEST_ID --metric NAME[LABELS] --good G --bad B | --alert ID) [--repeat N] [--max-step-runs N] [--max-runs N] [--refs A,B,...|--images A,B,...] [--scheduler NAME] [--threshold PCT] [--output DIR] [--json]
  Names the first commit at which TEST_ID's metric went bad: reruns the test (disagg-bench run, on
  the local or SLURM scheduler) at the commits between a good and a bad state, halving the range
  at each step as git bisect does, with a verdict at each step that is significant or says so.
  First both ends are measured again (at least ${endRuns(DEFAULT_BUDGET)} runs each) until the bad one is significantly
  worse than the good one beyond the threshold (one-sided t-test at ${ENDS_ALPHA * 100}%), else there is nothing
  to search. Each step then runs until its mean is significantly nearer the good level or the bad
  one (a sequential likelihood-ratio test: one level ${Math.round((1 - STEP_ALPHA) / STEP_ALPHA)} times likelier than the other; an
  end is run again when that narrows the verdict more), or the budget is spent: then the answer
  is "inconclusive", naming the range left and the flag and value that would decide it. Which way is worse comes from
  the metric's definition (the runs' records, the test's config, the serving metric's name), never
  from the values. The repository of WORK_DIR is left as it was: the steps check out their commits
  in a work tree of their own in a temporary folder, removed at the end.
  --good G, --bad B  a run of the history (id, label, latest, previous): its value and those of the
                     history's other runs at the same commit; or values measured elsewhere,
                     REF:V1,V2,... (REF a commit or ref; with --images, an image)
  --metric NAME      the metric; NAME[label=value,...] when the test yields it for several label sets
  --alert ID         an alert of the history (history alerts): its test, metric and label set, from
                     its last good run to its first bad one, instead of TEST_ID --metric --good --bad
  --repeat N         runs of each step before it is judged (default ${DEFAULT_BUDGET.repeat})
  --max-step-runs N  most runs of one step or end (default ${DEFAULT_BUDGET.maxStepRuns})
  --max-runs N       most runs of the whole bisection, ends included (default ${DEFAULT_BUDGET.maxRuns})
  --refs A,B,...     the candidates, in order, instead of the commits from good to bad
  --images A,B,...   container images, in order (CONTAINER_IMAGE of each step's run): only for test
                     types whose jobs run in the config's container image
  --scheduler NAME   the steps' scheduler (default: SCHEDULER, else slurm when sbatch is on PATH)
  --threshold PCT    a smaller change is no regression (default: the config's post-merge threshold, DISAGG_REGRESSION_THRESHOLD, else 5)
  --output DIR       keep each run's folders under DIR (default: a temporary folder, removed)
  --json             the result as one JSON document
  Exit ${EXIT_OK} with the first bad candidate named, or with nothing to search or none found; ${EXIT_INCONCLUSIVE} when
  inconclusive; 2 on a usage error; 3 when it could not do its work (git, the store). Ctrl-C or
  SIGTERM stops the step's run (its jobs cancelled) and removes the work tree.`;

const OPTIONS = {
  alert: { type: 'string' },
  metric: { type: 'string' },
  good: { type: 'string' },
  bad: { type: 'string' },
  repeat: { type: 'string' },
  'max-step-runs': { type: 'string' },
  'max-runs': { type: 'string' },
  refs: { type: 'string' },
  images: { type: 'string' },
  scheduler: { type: 'string' },
  threshold: { type: 'string' },
  output: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/**
 * What a bisection searches: a test's metric between a good and a bad state, each a run of the
 * history, `latest`/`previous`, or `REF:V1,V2,...`. The command line gives it (targetOfArgs); so
 * may anything else that knows a regression's range.
 */
export interface BisectTarget {
  testId: string;
  metric: MetricRef;
  good: string;
  bad: string;
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required\n${usage}`, name);
  return value;
}

const list = (text: string | undefined) => (text ?? '').split(',').map((s) => s.trim()).filter(Boolean);

type Values = Record<string, string | boolean | undefined>;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, OPTIONS, usage);
  if (values.help) return console.log(usage), 0;
  return bisectTarget(values.alert !== undefined ? await targetOfAlert(String(values.alert), values, positionals) : targetOfArgs(values, positionals), values);
}

/** The target an alert names: its series, from its last good run to its first bad one (both runs of the history). */
async function targetOfAlert(id: string, values: Values, positionals: string[]): Promise<BisectTarget> {
  const given = ['metric', 'good', 'bad'].filter((name) => values[name] !== undefined);
  if (positionals.length || given.length) throw new UsageError(`--alert names the test, metric and range itself: give it without ${[...(positionals.length ? ['TEST_ID'] : []), ...given.map((n) => `--${n}`)].join(', ')}`, 'alert');
  const settings = historySettings();
  const alert = await onStore(settings, (store) => store.alerts.get(id));
  if (!alert) throw new UsageError(`no alert ${JSON.stringify(id)} in the history (history alerts --all lists them)`, 'alert');
  if (!alert.lastGoodRunId) throw new UsageError(`alert ${id} has no good run before it in the history: name --good yourself (TEST_ID --metric --good --bad)`, 'alert');
  const labels = Object.entries(alert.labels).map(([k, v]) => `${k}=${v}`).join(',');
  return { testId: alert.testId, metric: parseMetricRef(labels ? `${alert.metric}[${labels}]` : alert.metric), good: alert.lastGoodRunId, bad: alert.firstRunId };
}

/** The target the command line names: TEST_ID --metric --good --bad. */
export function targetOfArgs(values: Values, positionals: string[]): BisectTarget {
  if (positionals.length !== 1) throw new UsageError(`name one test id (got ${positionals.length})\n${usage}`);
  return { testId: positionals[0], metric: parseMetricRef(required(values, 'metric')), good: required(values, 'good'), bad: required(values, 'bad') };
}

/** --repeat, --max-step-runs, --max-runs: whole numbers >= 1, defaults from budget.ts. */
function budgetOfArgs(values: Values): Budget {
  const count = (name: string, fallback: number) => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (typeof raw !== 'string' || raw.trim() === '' || !Number.isInteger(n) || n < 1) throw new UsageError(`--${name} ${JSON.stringify(raw)}: expected a whole number of runs >= 1`, name);
    return n;
  };
  const budget = { repeat: count('repeat', DEFAULT_BUDGET.repeat), maxStepRuns: count('max-step-runs', DEFAULT_BUDGET.maxStepRuns), maxRuns: count('max-runs', DEFAULT_BUDGET.maxRuns) };
  const problem = budgetProblem(budget);
  if (problem) throw new UsageError(problem, 'max-runs');
  return budget;
}

/** Bisects `target` with the command line's other options; the exit code. */
export async function bisectTarget(target: BisectTarget, values: Values): Promise<number> {
  const { testId, metric } = target;
  if (target.good.trim() === target.bad.trim()) throw new UsageError(`--good and --bad are both '${target.good}': name a good and a different, bad state`, 'bad');
  const budget = budgetOfArgs(values);
  if (values.refs !== undefined && values.images !== undefined) throw new UsageError('--refs and --images are two ways to list the candidates: give one', 'images');
  // The steps' `disagg-bench run --scheduler` would refuse it at every step: refused once, here.
  const named = values.scheduler;
  const scheduler = typeof named === 'string' ? named : undefined;
  const schedulerProblem = scheduler !== undefined ? runOption('scheduler')?.check?.(scheduler) : undefined;
  if (schedulerProblem) throw new UsageError(`--scheduler ${JSON.stringify(scheduler)}: ${schedulerProblem}`, 'scheduler');
  const settings = historySettings();

  const [good, bad] = await references(settings, [['good', target.good], ['bad', target.bad]], testId, metric);
  const type = good.testType ?? bad.testType ?? typeOfTestId(testId);
  const imagesWhy = values.images !== undefined ? imagesRefusal(type) : undefined;
  if (imagesWhy) throw new UsageError(`--images: ${imagesWhy}`, 'images');
  const direction = metricDirection(metric, [good, bad], { workDir: settings.workDir, testId, testType: type });
  const threshold = values.threshold !== undefined
    ? percentOption('threshold', String(values.threshold), 5) / 100
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
    const candidates = candidatesOf(values, settings, good, bad);
    const repo = candidates.repo;
    const first = candidates.ends.good?.commit ?? candidates.list[0]?.commit;
    if (repo && first) worktree = StepWorktree.create(repo, path.join(scratch, 'tree'), first);
    const plan: BisectPlan = {
      testId,
      testType: type,
      metric,
      good,
      bad,
      higherIsBetter: direction.higherIsBetter,
      threshold,
      ...roundedOf(good, bad),
      candidates: candidates.list,
      lastIsBad: candidates.lastIsBad,
      endStates: candidates.ends,
      budget,
      outputRoot: values.output ? path.resolve(String(values.output)) : path.join(scratch, 'runs'),
      env: {
        ...(scheduler ? { SCHEDULER: scheduler } : {}),
        ...(!process.env.GPU_TYPE && (good.gpuType ?? bad.gpuType) ? { GPU_TYPE: (good.gpuType ?? bad.gpuType)! } : {}),
      },
      prepare: (c): Record<string, string> => {
        if (c.image) return { CONTAINER_IMAGE: c.image, DISAGG_FORCE_ENV: [process.env.DISAGG_FORCE_ENV, 'CONTAINER_IMAGE'].filter(Boolean).join(',') };
        worktree!.checkout(c.commit!);
        return { WORK_DIR: worktree!.workDir };
      },
    };
    const progress = (line: string) => process.stderr.write(`bisect: ${line}\n`);
    progress(`${testId} ${metric.name}${metric.labels ? labelsText(metric.labels) : ''} (${direction.higherIsBetter ? 'higher' : 'lower'} is better, ${direction.from}; threshold ${(threshold * 100).toFixed(2)}%)`);
    progress(describeReference(good, metric));
    progress(describeReference(bad, metric));
    const steps = roughSteps(plan.lastIsBad && plan.endStates.bad ? plan.candidates.length - 1 : plan.candidates.length);
    progress(`${plan.candidates.length} candidate(s), roughly ${steps} step(s); each end run at least ${endRuns(budget)} time(s), each step ${budget.repeat}, at most ${budget.maxStepRuns} each and ${budget.maxRuns} in all`);
    const result = await bisect(plan, runner, progress, () => signal);
    report(plan, result, Boolean(values.json));
    const { outcome } = result;
    return outcome.kind === 'interrupted' ? signalExitCode(outcome.signal) : outcome.kind === 'inconclusive' ? EXIT_INCONCLUSIVE : EXIT_OK;
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

interface Candidates {
  list: Candidate[];
  lastIsBad: boolean;
  /** The ends' states, where the bisection can measure them again. */
  ends: { good?: Candidate; bad?: Candidate };
  repo?: Repository;
}

function candidatesOf(values: Values, settings: Settings, good: Reference, bad: Reference): Candidates {
  if (values.images !== undefined) {
    const images = list(values.images as string);
    if (images.length === 0) throw new UsageError('--images: name at least one image', 'images');
    const image = (ref: string | undefined): Candidate | undefined => (ref ? { name: ref, image: ref } : undefined);
    const lastIsBad = images.at(-1) === bad.ref;
    const steps = images.map((i) => image(i)!);
    return { list: steps, lastIsBad, ends: { ...(good.ref && { good: image(good.ref) }), ...(bad.ref && { bad: lastIsBad ? steps.at(-1) : image(bad.ref) }) } };
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
    const [goodCommit, badCommit] = [good.ref ? tryCommit(repo, good.ref) : undefined, bad.ref ? tryCommit(repo, bad.ref) : undefined];
    const steps = commits.map(named);
    const lastIsBad = badCommit !== undefined && commits.at(-1) === badCommit;
    return { list: steps, lastIsBad, ends: { ...(goodCommit && { good: named(goodCommit) }), ...(badCommit && { bad: lastIsBad ? steps.at(-1) : named(badCommit) }) }, repo };
  }
  const commitOfEnd = (r: Reference) => {
    if (!r.ref) throw new UsageError(`--${r.end} ${r.given}: the run recorded no git commit (WORK_DIR was not a git work tree when it ran): give --${r.end} COMMIT:V1,V2,...`, r.end);
    return commitOf(repo, r.ref, r.end);
  };
  const goodCommit = commitOfEnd(good);
  const steps = commitsBetween(repo, goodCommit, commitOfEnd(bad)).map(named);
  return { list: steps, lastIsBad: true, ends: { good: named(goodCommit), ...(steps.length > 0 && { bad: steps.at(-1) }) }, repo };
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

/** The coarser step the ends' figures were printed rounded to, when either was (a change within it is no news). */
function roundedOf(...ends: Reference[]): { rounded?: number } {
  const steps = ends.flatMap((e) => (e.rounded !== undefined ? [e.rounded] : []));
  return steps.length > 0 ? { rounded: maxOf(steps) } : {};
}
