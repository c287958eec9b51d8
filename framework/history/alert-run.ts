// A judged run's part in the alerts: a post-merge run's findings open, update and close alerts
// (alert-store.ts), once, when the run reaches the store: at its own end (run-end.ts), or when it
// is imported (judgeStoredRuns judges it there first, against the runs before it).
import type { RecordRegression, TestRecord } from '../results/json.ts';
import type { Settings } from '../settings.ts';
import type { AlertFinding } from './alert-store.ts';
import { labelsKey, casePrefix, seriesId } from './series-key.ts';
import type { HistoryStore } from './store.ts';
import { checkRun } from './check-run.ts';
import { olderRecordsGate } from './older-records-gate.ts';
import { minOf } from '../../runners/common/stats.ts';

/** The robust findings of a run's records as the alert store takes them. */
function alertFindings(records: readonly TestRecord[]): AlertFinding[] {
  return records.flatMap((record) => {
    const prefix = casePrefix(record.testId, record.gpuType, record.run?.identity);
    return (record.regression?.findings ?? [])
      .filter((f) => f.rule === 'robust' && f.status)
      .map((f) => ({
        seriesId: seriesId(`${prefix}${labelsKey(f.labels)}]`, f.metric),
        testId: record.testId,
        metric: f.metric,
        labels: f.labels,
        unit: f.unit,
        higherIsBetter: record.metrics.find((m) => m.name === f.metric && labelsKey(m.labels) === labelsKey(f.labels))?.higherIsBetter ?? f.diffPercent * (f.value - f.baseline) >= 0,
        ...(record.gpuType ? { gpuType: record.gpuType } : {}),
        ...(record.run?.branch ? { branch: record.run.branch } : {}),
        status: f.status!,
        value: f.value,
        level: f.baseline,
        scale: f.scale ?? 0,
        change: f.change ?? 0,
        ...(f.pValue !== undefined ? { pValue: f.pValue } : {}),
        note: f.note ?? '',
        ...(f.firstRunId ? { firstRunId: f.firstRunId } : {}),
        ...(f.lastGoodRunId ? { lastGoodRunId: f.lastGoodRunId } : {}),
      }));
  });
}

/** Applies a post-merge run's recorded findings to the alerts; other kinds change none. */
export async function applyRunAlerts(store: HistoryStore, runId: string, records: readonly TestRecord[]): Promise<{ opened: string[]; closed: string[] }> {
  const mine = records.filter((r) => r.run?.id === runId && r.run.kind === 'post-merge');
  const findings = alertFindings(mine);
  if (findings.length === 0) return { opened: [], closed: [] };
  const named = new Set<string>([runId]);
  for (const f of findings) {
    if (f.firstRunId) named.add(f.firstRunId);
    if (f.lastGoodRunId) named.add(f.lastGoodRunId);
  }
  const runs = await store.runFacts([...named]);
  return store.alerts.applyRun(runId, findings, runs);
}

/**
 * Judges stored runs that carry no robust verdict yet (imported results), oldest first, each
 * against the runs before it, keeps the verdict with their records and applies it to the alerts.
 * Runs judged already (by their own end) are left as they are.
 */
export async function judgeStoredRuns(store: HistoryStore, runIds: readonly string[], settings: Settings): Promise<{ judged: number; opened: string[]; closed: string[] }> {
  const out = { judged: 0, opened: [] as string[], closed: [] as string[] };
  if (settings.history.gate.rule !== 'robust' || settings.history.regression === 'off') return out;
  const records = await store.records([...runIds]);
  const byRun = new Map<string, TestRecord[]>();
  for (const r of records) {
    if (!r.run) continue;
    const list = byRun.get(r.run.id);
    if (list) list.push(r);
    else byRun.set(r.run.id, [r]);
  }
  const ordered = [...byRun.entries()].sort(([, a], [, b]) => minOf(a.map(startOf)) - minOf(b.map(startOf)));
  for (const [runId, runRecords] of ordered) {
    if (runRecords.some((r) => r.regression?.findings.some((f) => f.rule === 'robust'))) continue;
    const checks = await checkRun(store, runRecords, {
      storedRunId: runId,
      gate: settings.history.gate,
      globalThresholdPercent: settings.history.thresholdPercent,
      judgeAgain: true,
      ...(await olderRecordsGate(settings, runRecords)),
    });
    const mode = settings.history.regression;
    const checkOf = new Map(checks.map((c) => [c.testId, c]));
    const verdicts: { testId: string; regression: RecordRegression }[] = [];
    for (const record of runRecords) {
      const check = checkOf.get(record.testId);
      if (!check) continue;
      record.regression = { mode, findings: check.findings, ...(check.skipped ? { skipped: check.skipped } : {}) };
      verdicts.push({ testId: record.testId, regression: record.regression });
    }
    await store.setRegressions(runId, verdicts);
    out.judged++;
    const applied = await applyRunAlerts(store, runId, runRecords);
    out.opened.push(...applied.opened);
    out.closed.push(...applied.closed);
  }
  return out;
}

const startOf = (r: TestRecord) => Date.parse(r.timing.start);
