// `disagg-bench history regressions [results.json] [--run ID|LABEL]`
import { checkRun } from '../../history/check-run.ts';
import { describeFinding } from '../../history/regression.ts';
import { resolveRun } from '../../history/run-ref.ts';
import { RUN_KINDS, type RunKind } from '../../settings.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history regressions [results.json|folder] [--run ID|LABEL|latest] [--kind post-merge|pre-merge] [--all]
  Checks one run against baselines computed from the history before it, as upstream does
  (90 days of valid post-merge values, per-day mean, 3-day rolling mean, P95 / P5; thresholds from
  the configs, DISAGG_REGRESSION_THRESHOLD, else 5 % post-merge and 10 % pre-merge).
  The run: the latest run of the results file given, else --run, else the latest run in the history.
  Exit 1 when any metric regressed, listing each; 0 otherwise.
  --kind  judge as this kind of run (default: the run's own kind)
  --all   also list the metrics that did not regress`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { run: { type: 'string' }, kind: { type: 'string' }, all: { type: 'boolean' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length > 1 || (positionals.length && values.run)) throw new UsageError(`name one run: a results file or --run\n${usage}`);
  if (values.kind !== undefined && !(RUN_KINDS as readonly string[]).includes(values.kind)) throw new UsageError(`--kind ${JSON.stringify(values.kind)}: expected post-merge or pre-merge`);
  const settings = historySettings();
  return onStore(settings, async (store) => {
    const target = await resolveRun(positionals[0] ?? values.run ?? 'latest', async () => store);
    const checks = await checkRun(store, target.records, {
      runKind: values.kind as RunKind | undefined,
      storedRunId: target.storedRunId,
      globalThresholdPercent: settings.history.thresholdPercent,
      // Only records of an older version (no run context) need their configs: loading the test types costs a second.
      identityOf: target.records.some((r) => !r.run)
        ? (await import('../../history/config-identity.ts')).configIdentities(settings.workDir, settings.history.thresholdPercent)
        : undefined,
    });
    let compared = 0;
    let regressions = 0;
    for (const check of checks) {
      compared += check.findings.length;
      for (const f of check.findings) {
        if (f.regression) regressions++;
        if (f.regression || values.all) console.log(`${f.regression ? 'REGRESSION' : 'ok'}  ${describeFinding(check.testId, f)}`);
      }
    }
    const unchecked = checks.filter((c) => c.findings.length === 0).length;
    console.log(`run ${target.name}: ${target.records.length} test(s), ${compared} metric(s) compared with their baselines in ${store.description}, ${regressions} regression(s)${unchecked ? `; ${unchecked} test(s) without earlier post-merge history` : ''}`);
    return regressions > 0 ? 1 : 0;
  });
}
