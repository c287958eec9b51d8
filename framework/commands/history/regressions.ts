// `disagg-bench history regressions [results.json] [--run ID|LABEL] [--json]`
import { checkRun, ruleOf } from '../../history/check-run.ts';
import { describeFinding, unmeasuredLine } from '../../history/regression.ts';
import { resolveRun } from '../../history/run-ref.ts';
import { gatedMetrics } from '../../history/gate-metrics.ts';
import { RUN_KINDS, type RunKind } from '../../settings.ts';
import type { TestRecord } from '../../results/json.ts';
import type { ConfigIdentity } from '../../history/config-identity.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history regressions [results.json|folder] [--run ID|LABEL|latest] [--kind post-merge|pre-merge|local] [--all] [--json]
  Checks one run against baselines computed from the history before it, as upstream does
  (90 days of valid post-merge values of the run's branch, or of DISAGG_BASELINE_BRANCH for a
  pre-merge run; per-day mean, 3-day rolling mean, P95 / P5; thresholds from the configs,
  DISAGG_REGRESSION_THRESHOLD, else 10 % pre-merge and 5 % otherwise). Only gating metrics can
  regress (each test type's headline metrics, as the run recorded them; DISAGG_GATE_METRICS for
  records that carry none), and only beyond the threshold and DISAGG_GATE_NOISE_K (3) robust
  standard deviations of the series, after DISAGG_GATE_MIN_DAYS (3) days of history. A figure
  printed rounded to zero is no measurement: not judged, and said once; a breach that the print's
  rounding alone could explain is no regression.
  The run: the latest run of the results file given, else --run, else the latest run in the history.
  Exit 1 when any metric regressed, listing each; 0 otherwise.
  --kind  judge as this kind of run (default: the run's own kind)
  --all   also list the metrics that did not regress
  --json  the findings as one JSON document`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { run: { type: 'string' }, kind: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length > 1 || (positionals.length && values.run)) throw new UsageError(`name one run: a results file or --run\n${usage}`);
  if (values.kind !== undefined && !(RUN_KINDS as readonly string[]).includes(values.kind)) throw new UsageError(`--kind ${JSON.stringify(values.kind)}: expected ${RUN_KINDS.join(', ')}`);
  const settings = historySettings();
  const gate = settings.history.gate;
  return onStore(settings, async (store) => {
    const target = await resolveRun(positionals[0] ?? values.run ?? 'latest', async () => store);
    const older = target.records.some((r) => !r.run?.gate);
    // Only records of an older version (no run context, no gate) need their configs: loading the test types costs a second.
    const configOf = older ? await configLookup(settings.workDir, settings.history.thresholdPercent) : undefined;
    const checks = await checkRun(store, target.records, {
      runKind: values.kind as RunKind | undefined,
      storedRunId: target.storedRunId,
      globalThresholdPercent: settings.history.thresholdPercent,
      rule: ruleOf(gate),
      baselineBranch: gate.baselineBranch,
      fallbackGate: configOf ? await fallbackGate(gate.metrics, configOf) : undefined,
      identityOf: target.records.some((r) => !r.run) ? configOf : undefined,
    });
    const findings = checks.flatMap((c) => c.findings.map((f) => ({ testId: c.testId, ...f })));
    const regressions = findings.filter((f) => f.regression).length;
    const unchecked = checks.filter((c) => c.findings.length === 0).length;
    if (values.json) {
      const unmeasured = checks.flatMap((c) => (c.unmeasured ?? []).map((metric) => ({ testId: c.testId, metric })));
      console.log(JSON.stringify({ run: target.name, store: store.description, tests: target.records.length, compared: findings.length, regressions, unchecked, findings, unmeasured }, null, 2));
      return regressions > 0 ? 1 : 0;
    }
    for (const f of findings) {
      if (f.regression || values.all) console.log(`${f.regression ? 'REGRESSION' : 'ok'}  ${describeFinding(f.testId, f)}`);
    }
    const unmeasured = unmeasuredLine(checks);
    if (unmeasured) console.log(unmeasured);
    const shown = findings.filter((f) => f.gated === false).length;
    console.log(
      `run ${target.name}: ${target.records.length} test(s), ${findings.length} metric(s) compared with their baselines in ${store.description} (${findings.length - shown} gating), ${regressions} regression(s)${unchecked ? `; ${unchecked} test(s) without earlier post-merge history` : ''}`,
    );
    return regressions > 0 ? 1 : 0;
  });
}

/** Each test id's config under WORK_DIR, read the first time one is asked for. */
async function configLookup(workDir: string, thresholdPercent: number | undefined): Promise<(testId: string) => ConfigIdentity | undefined> {
  const { configIdentities } = await import('../../history/config-identity.ts');
  let lookup: ((testId: string) => ConfigIdentity | undefined) | undefined;
  return (testId) => (lookup ??= configIdentities(workDir, thresholdPercent))(testId);
}

/**
 * For records written before the gate was kept: DISAGG_GATE_METRICS, with each record's headline:
 * the one it carries, else its type's from its config under WORK_DIR, else its type's without one.
 */
async function fallbackGate(setting: string[], configOf: (testId: string) => ConfigIdentity | undefined): Promise<(record: TestRecord) => string[]> {
  const needsTypes = setting.includes('headline');
  const registry = needsTypes ? await import('../../types/registry.ts') : undefined;
  const { headlineMetrics } = await import('../../metrics/headline.ts');
  return (record) => {
    const type = registry?.testType(record.type);
    const picked = record.headline ?? (type ? headlineMetrics(type, configOf(record.testId)?.config ?? {}, record.category, record.metrics) : []);
    return gatedMetrics(record.metrics, needsTypes ? picked.map((m) => m.name) : [], setting);
  };
}
