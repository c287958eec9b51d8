// `disagg-bench history alerts [--all] [--json]` and `disagg-bench history ack ID --reason TEXT`:
// the changes the gate found, open until their series comes back or someone accepts the new level.
import { describeAlert } from '../../history/alert-text.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history alerts [--all] [--json]
  The alerts the regression gate opened: a change in a gating figure of a post-merge run, confirmed
  by one run or two (docs/history.md). An alert stays open, shown by every later run's digest,
  report and \`history regressions\`, until its series is back at its old level for two runs (it
  closes by itself) or someone accepts the new level (\`history ack ID --reason ...\`), which then
  becomes the baseline. Each names its test, metric and label set, the change, the noise, the
  first bad run and the last good one with their commits (\`history bisect --alert ID\` searches
  between them), and its p-value for the whole run.
  --all   also the closed and acknowledged alerts
  --json  the alerts as one JSON document`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { all: { type: 'boolean' }, json: { type: 'boolean' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}\n${usage}`);
  const settings = historySettings();
  return onStore(settings, async (store) => {
    const alerts = await store.alerts.list(values.all ? {} : { status: ['open'] });
    if (values.json) {
      console.log(JSON.stringify({ store: store.description, alerts }, null, 2));
      return 0;
    }
    for (const a of alerts) console.log(describeAlert(a));
    console.log(`${alerts.length} ${values.all ? '' : 'open '}alert(s) in ${store.description}`);
    return 0;
  });
}
