// The history's part at the end of a run (framework/suite/reporter.ts): every record of
// results.json that belongs to a run (it carries a run context that is not left out:
// unappended.ts) and that the store does not hold yet is appended, in one transaction. This run's records, and those of an earlier run that was
// killed before its end (RESUME picks its records up). A store that fails is one sentence; the
// run's own results are already written and stay as they are, and its records are kept in the
// pending file (pending.ts) for the next run or `history import`.
import type { Settings } from '../settings.ts';
import { isRecordOfRun, readResults } from '../results/json.ts';
import { isHistoryStoreError } from './errors.ts';
import { withHistory, type AppendResult } from './store.ts';
import { trendsForRun } from './trends.ts';
import { clearPending, keepAside, pendingFileOf, readPending } from './pending.ts';
import type { TrendInput } from '../results/report/trends.ts';
import type { PreviousValues } from '../results/digest/digest.ts';
import { previousValues } from './previous-values.ts';
import { appendedAtRunEnd } from './unappended.ts';
import { applyRunAlerts } from './alert-run.ts';
import { describeAlert } from './alert-text.ts';

/** The alerts a run opened and closed, as the end of its history line. */
export function alertsLine(a: { opened: string[]; closed: string[] }): string {
  const parts = [a.opened.length ? `${a.opened.length} alert(s) opened (${a.opened.join(', ')})` : '', a.closed.length ? `${a.closed.length} closed, the series back at their level (${a.closed.join(', ')})` : ''].filter(Boolean);
  return parts.length ? `; ${parts.join('; ')}: \`disagg-bench history alerts\`` : '';
}

export interface RunEndHistory {
  /** One line for the run's output. */
  message: string;
  ok: boolean;
  appended?: AppendResult;
  /** The report's trend section for this run's records. */
  trends?: TrendInput;
  /** The run before's value of each headline figure of this run (the run digest's "vs previous"). */
  previous?: PreviousValues;
}

export async function appendRunsToHistory(settings: Settings, runId?: string): Promise<RunEndHistory | undefined> {
  const target = settings.history.target;
  if (target.kind === 'off') return undefined;
  const { records } = await readResults(settings.outputPath);
  const pendingFile = pendingFileOf(target, settings.outputPath);
  const pending = readPending(pendingFile);
  const own = records.filter(appendedAtRunEnd).map((record) => ({ record, run: record.run, source: 'run' }));
  const entries = [...pending, ...own];
  if (entries.length === 0) return undefined;
  try {
    return await withHistory(
      target,
      async (store) => {
        const appended = await store.append(entries);
        clearPending(pendingFile);
        const mine = runId === undefined ? [] : records.filter((r) => isRecordOfRun(r, runId));
        // A post-merge run's verdict opens, keeps and closes alerts, once: when its records arrive.
        const alerts = appended.tests > 0 && runId ? await applyRunAlerts(store, runId, mine) : { opened: [], closed: [] };
        const said = alertsLine(alerts);
        const open = (await store.alerts.list({ status: ['open'] })).map(describeAlert);
        const trends = mine.length ? { ...(await trendsForRun(store, mine)), ...(open.length && { openAlerts: open }) } : undefined;
        const previous = mine.length && runId ? await previousValues(store, mine, runId) : undefined;
        return { ok: true, appended, trends, previous, message: `history: ${appended.tests} record(s), ${appended.metrics} metric value(s) appended to ${store.description}${said}` };
      },
      { create: true, lockWaitSec: settings.history.gate.lockWaitSec },
    );
  } catch (error) {
    if (!isHistoryStoreError(error)) throw error;
    // Records not kept aside stay in results.json: the next run that reaches a store appends them.
    return { ok: false, message: `history: ${keepAside(error, target, pendingFile, own)}` };
  }
}
