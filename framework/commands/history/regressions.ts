// `disagg-bench history regressions [results.json] [--run ID|LABEL] [--json]`
import { checkRun } from '../../history/check-run.ts';
import { describeFinding, unmeasuredLine } from '../../history/regression.ts';
import { resolveRun } from '../../history/run-ref.ts';
import { gateVariablesHelp, RUN_KINDS, type RunKind } from '../../settings.ts';
import { describeAlert } from '../../history/alert-text.ts';
import { gateSensitivity } from '../../results/gate-sensitivity.ts';
import { DETECTION_POWER } from '../../history/gate/detectable.ts';
import { sensitivityText } from '../../results/digest/digest-text.ts';
import type { RegressionFinding } from '../../results/json.ts';
import { olderRecordsGate } from '../../history/older-records-gate.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history regressions [results.json|folder] [--run ID|LABEL|latest] [--kind post-merge|pre-merge|local] [--all] [--json]
  The gate's verdict on one run, and every alert still open. A run is judged once, when it reaches
  the history (its end, or its import), and shown with that verdict; --kind judges it again as
  another kind of run. The robust rule (default): each gating figure (each test type's headline
  figures at their label sets, docs/figures.md; DISAGG_GATE_METRICS for more) against its level,
  the trimmed mean of its post-merge runs since its last acknowledged change, in its noise (the
  runs' median absolute deviation, pooled with the run's other figures); a change alerts when it is
  beyond the threshold (the config's, DISAGG_REGRESSION_THRESHOLD, else 5 % post-merge, 10 %
  pre-merge) and significant for the whole run, on one run or confirmed by the next; an alert stays
  shown until the series comes back or is acknowledged (history alerts, history ack). A pre-merge
  run is judged against the baseline branch's current level. DISAGG_GATE_RULE=upstream gives
  upstream's rule instead (its threshold over the P95 / P5 of the daily means), labelled so.
  The gate's settings:
${gateVariablesHelp('    ')}
  The run: the latest run of the results file given, else --run, else the latest run in the history.
  Exit 1 when a gating figure of the run regressed or is still under an open alert, listing each;
  0 otherwise; 2 or more when the command could not judge (a usage error, a store that cannot be read).
  Under the verdict, what it rules out: the worsening caught ${DETECTION_POWER * 100} % of the time in the
  median gating figure on its first run and by its second, and the figure the gate sees least well
  (--all: each figure's own).
  --kind  judge again as this kind of run (default: the verdict the run was given)
  --all   also list the figures that did not regress
  --json  the findings and open alerts as one JSON document`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { run: { type: 'string' }, kind: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length > 1 || (positionals.length && values.run)) throw new UsageError(`name one run: a results file or --run\n${usage}`);
  if (values.kind !== undefined && !(RUN_KINDS as readonly string[]).includes(values.kind)) throw new UsageError(`--kind ${JSON.stringify(values.kind)}: expected ${RUN_KINDS.join(', ')}`);
  const settings = historySettings();
  const gate = settings.history.gate;
  return onStore(settings, async (store) => {
    const target = await resolveRun(positionals[0] ?? values.run ?? 'latest', async () => store);
    const checks = await checkRun(store, target.records, {
      runKind: values.kind as RunKind | undefined,
      storedRunId: target.storedRunId,
      globalThresholdPercent: settings.history.thresholdPercent,
      gate,
      ...(await olderRecordsGate(settings, target.records)),
    });
    const findings = checks.flatMap((c) => c.findings.map((f) => ({ testId: c.testId, ...f })));
    const regressions = findings.filter((f) => f.regression).length;
    const unchecked = checks.filter((c) => c.findings.length === 0).length;
    // Alerts still open that this run's findings do not show (their series was not measured in it).
    const shownAlerts = new Set(findings.map((f) => f.alertId).filter(Boolean));
    const openAlerts = gate.rule === 'robust' ? (await store.alerts.list({ status: ['open'] })).filter((a) => !shownAlerts.has(a.id)) : [];
    const sensitivity = gateSensitivity(findings);
    if (values.json) {
      const unmeasured = checks.flatMap((c) => (c.unmeasured ?? []).map((metric) => ({ testId: c.testId, metric })));
      console.log(JSON.stringify({ run: target.name, store: store.description, rule: gate.rule, tests: target.records.length, compared: findings.length, regressions, unchecked, findings, unmeasured, openAlerts, ...(sensitivity && { sensitivity }) }, null, 2));
      return regressions > 0 ? 1 : 0;
    }
    for (const f of findings) {
      if (f.regression || values.all) console.log(`${findingTag(f)}  ${describeFinding(f.testId, f)}`);
    }
    const unmeasured = unmeasuredLine(checks);
    if (unmeasured) console.log(unmeasured);
    for (const a of openAlerts) console.log(`OPEN ALERT  ${describeAlert(a)}`);
    if (sensitivity) console.log(sensitivityText(sensitivity));
    const shown = findings.filter((f) => f.gated === false).length;
    console.log(
      `run ${target.name}: ${target.records.length} test(s), ${findings.length} metric(s) compared with their baselines in ${store.description} (${findings.length - shown} gating), ${regressions} regression(s)${openAlerts.length ? `, ${openAlerts.length} other open alert(s)` : ''}${unchecked ? `; ${unchecked} test(s) without earlier post-merge history` : ''}${gate.rule === 'upstream' ? " (upstream's rule)" : ''}`,
    );
    return regressions > 0 ? 1 : 0;
  });
}

/** A finding's word: REGRESSION (an alert opened), STILL REGRESSED (an alert still open), else its status. */
const findingTag = (f: RegressionFinding) => (f.regression ? (f.status === 'still-regressed' ? 'STILL REGRESSED' : 'REGRESSION') : (f.status ?? 'ok'));

