// `disagg-bench history ack ID --reason TEXT [--by NAME]`: accept an alert's new level.
import { describeAlert } from '../../history/alert-text.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history ack ALERT_ID --reason TEXT [--by NAME]
  Acknowledges an open alert (history alerts): the change is understood and accepted, so from its
  first run on the series' baseline is its new level, and later runs are judged against that. The
  reason and who gave it are kept with the alert (history alerts --all).
  --reason TEXT  why the new level is accepted (required)
  --by NAME      who acknowledges it (default: the USER variable)
  Exit 0 when acknowledged; 2 when there is no such open alert.`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { reason: { type: 'string' }, by: { type: 'string' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length !== 1) throw new UsageError(`name one alert id (history alerts lists them)\n${usage}`);
  const reason = values.reason?.trim();
  if (!reason) throw new UsageError(`--reason: say why the new level is accepted\n${usage}`);
  const settings = historySettings();
  return onStore(
    settings,
    async (store) => {
      const alert = await store.alerts.get(positionals[0]);
      if (!alert) throw new UsageError(`no alert ${JSON.stringify(positionals[0])} in ${store.description} (history alerts --all lists them)`);
      if (alert.status !== 'open') throw new UsageError(`alert ${alert.id} is ${alert.status === 'acked' ? 'acknowledged already' : 'closed: its series came back'}`);
      const acked = await store.alerts.ack(alert.id, reason, values.by?.trim() || process.env.USER || 'unknown');
      console.log(describeAlert(acked!));
      return 0;
    },
    { create: true, lockWaitSec: settings.history.gate.lockWaitSec },
  );
}
