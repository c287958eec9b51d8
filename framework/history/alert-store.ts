// The alerts table: a change the gate found (gate/judge-run.ts) lives here until the series comes
// back by itself (closed) or someone accepts the new level (acked). Only a post-merge run's end, or
// the import of one, opens, updates and closes alerts; `history ack` acknowledges them; every
// reader (regressions, alerts, the digest, the report, bisect --alert) reads them.
import { createHash } from 'node:crypto';
import type { GateFinding, SeriesIdentity } from './gate/judge-run.ts';
import { num, optional, parseJson, rowValues } from './rows.ts';
import { ALERT_COLUMNS, ALERTS_TABLE } from './schema.ts';
import { labelsKey } from './series-key.ts';
import type { SqlConnection, SqlValue } from './sql-connection.ts';

export type AlertStatus = 'open' | 'closed' | 'acked';

/** The GPU type and branch a series belongs to: an alert keeps them with the series. */
interface SeriesPlace {
  gpuType?: string;
  branch?: string;
}

export interface Alert extends SeriesIdentity, SeriesPlace {
  id: string;
  status: AlertStatus;
  levelBefore: number;
  scaleBefore: number;
  /** (value - level) / level when found, in the metric's own terms. */
  change: number;
  pValue?: number;
  confirmedBy: string;
  firstRunId: string;
  firstTsMs: number;
  firstCommit?: string;
  lastGoodRunId?: string;
  lastGoodCommit?: string;
  openedRunId: string;
  lastRunId?: string;
  lastValue?: number;
  backRuns: number;
  closedRunId?: string;
  closedTsMs?: number;
  ackReason?: string;
  ackBy?: string;
  ackMs?: number;
}

/** What a judged run knows of each run it names: when it ran and at which commit. */
export interface RunFacts {
  tsMs: number;
  commit?: string;
}

/** What opening, updating or closing an alert needs of a judged value (a recorded finding and its series). */
export interface AlertFinding extends SeriesIdentity, SeriesPlace, Pick<GateFinding, 'value' | 'level' | 'scale' | 'change' | 'pValue' | 'note' | 'firstRunId' | 'lastGoodRunId'> {
  status: string;
}

/** An alert's id: the same change found twice (a re-import) is the same alert. */
export const alertIdOf = (seriesId: number, firstRunId: string) => `a${createHash('sha256').update(`${seriesId}\u0000${firstRunId}`).digest('hex').slice(0, 8)}`;

type Row = Record<(typeof ALERT_COLUMNS)[number]['name'], SqlValue>;

function toRow(a: Alert): Row {
  return {
    alert_id: a.id,
    series_id: a.seriesId,
    test_id: a.testId,
    metric: a.metric,
    labels: labelsKey(a.labels),
    unit: a.unit,
    higher_is_better: a.higherIsBetter,
    gpu_type: a.gpuType ?? null,
    branch: a.branch ?? null,
    status: a.status,
    level_before: a.levelBefore,
    scale_before: a.scaleBefore,
    change: a.change,
    p_value: a.pValue ?? null,
    confirmed_by: a.confirmedBy,
    first_run_id: a.firstRunId,
    first_ts_ms: a.firstTsMs,
    first_commit: a.firstCommit ?? null,
    last_good_run_id: a.lastGoodRunId ?? null,
    last_good_commit: a.lastGoodCommit ?? null,
    opened_run_id: a.openedRunId,
    last_run_id: a.lastRunId ?? null,
    last_value: a.lastValue ?? null,
    back_runs: a.backRuns,
    closed_run_id: a.closedRunId ?? null,
    closed_ts_ms: a.closedTsMs ?? null,
    ack_reason: a.ackReason ?? null,
    ack_by: a.ackBy ?? null,
    ack_ms: a.ackMs ?? null,
  };
}

const maybeNum = (v: unknown) => (v === null || v === undefined ? undefined : num(v));

function fromRow(r: Record<string, unknown>): Alert {
  return {
    id: String(r.alert_id),
    seriesId: num(r.series_id),
    testId: String(r.test_id),
    metric: String(r.metric),
    labels: parseJson(r.labels, {}),
    unit: String(r.unit ?? ''),
    higherIsBetter: Boolean(r.higher_is_better),
    gpuType: optional(r.gpu_type),
    branch: optional(r.branch),
    status: String(r.status) as AlertStatus,
    levelBefore: num(r.level_before),
    scaleBefore: num(r.scale_before),
    change: num(r.change),
    pValue: maybeNum(r.p_value),
    confirmedBy: String(r.confirmed_by ?? ''),
    firstRunId: String(r.first_run_id),
    firstTsMs: num(r.first_ts_ms),
    firstCommit: optional(r.first_commit),
    lastGoodRunId: optional(r.last_good_run_id),
    lastGoodCommit: optional(r.last_good_commit),
    openedRunId: String(r.opened_run_id),
    lastRunId: optional(r.last_run_id),
    lastValue: maybeNum(r.last_value),
    backRuns: num(r.back_runs ?? 0),
    closedRunId: optional(r.closed_run_id),
    closedTsMs: maybeNum(r.closed_ts_ms),
    ackReason: optional(r.ack_reason),
    ackBy: optional(r.ack_by),
    ackMs: maybeNum(r.ack_ms),
  };
}

/** Every column by name, the 64-bit ones as doubles (JavaScript numbers; a series id and a time fit in 53 bits). */
const BIG = new Set(['series_id', 'first_ts_ms', 'closed_ts_ms', 'ack_ms', 'back_runs']);
const SELECT = `SELECT ${ALERT_COLUMNS.map((c) => (BIG.has(c.name) ? `CAST(${c.name} AS DOUBLE PRECISION) AS ${c.name}` : c.name)).join(', ')} FROM ${ALERTS_TABLE}`;

export class AlertStore {
  constructor(private readonly db: SqlConnection) {}

  /** Alerts, oldest first; by status and series when asked. */
  async list(filter: { status?: readonly AlertStatus[]; seriesIds?: readonly number[] } = {}): Promise<Alert[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.status?.length) {
      where.push(`status IN (${filter.status.map((s) => (params.push(s), `$${params.length}`)).join(', ')})`);
    }
    if (filter.seriesIds) {
      if (filter.seriesIds.length === 0) return [];
      if (filter.seriesIds.length > 500) {
        // A run's tens of thousands of series: the alerts (a small table) read whole and picked
        // here; as many parameters cost the database seconds.
        const wanted = new Set(filter.seriesIds);
        return (await this.list(filter.status ? { status: filter.status } : {})).filter((a) => wanted.has(a.seriesId));
      }
      where.push(`series_id IN (${filter.seriesIds.map((id) => (params.push(id), `$${params.length}`)).join(', ')})`);
    }
    const rows = await this.db.query(`${SELECT}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY first_ts_ms, alert_id`, params);
    return rows.map(fromRow);
  }

  async get(id: string): Promise<Alert | undefined> {
    const rows = await this.db.query(`${SELECT} WHERE alert_id = $1`, [id]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /**
   * What one judged post-merge run does to the alerts: a regression opens one (unless its series
   * has one open), a still-regressed series updates it, a recovered one counts toward its closing.
   * One transaction; applying the same run twice changes nothing more.
   */
  async applyRun(runId: string, findings: readonly AlertFinding[], runs: ReadonlyMap<string, RunFacts>): Promise<{ opened: string[]; closed: string[] }> {
    const opened: string[] = [];
    const closed: string[] = [];
    await this.db.transaction(async () => {
      const open = new Map((await this.list({ status: ['open'], seriesIds: [...new Set(findings.map((f) => f.seriesId))] })).map((a) => [a.seriesId, a]));
      for (const f of findings) {
        const current = open.get(f.seriesId);
        if (f.status === 'regression' && !current && f.firstRunId) {
          const id = alertIdOf(f.seriesId, f.firstRunId);
          if (await this.get(id)) continue;
          const first = runs.get(f.firstRunId);
          const good = f.lastGoodRunId ? runs.get(f.lastGoodRunId) : undefined;
          const alert: Alert = {
            id,
            seriesId: f.seriesId,
            testId: f.testId,
            metric: f.metric,
            labels: f.labels,
            unit: f.unit,
            higherIsBetter: f.higherIsBetter,
            gpuType: f.gpuType,
            branch: f.branch,
            status: 'open',
            levelBefore: f.level,
            scaleBefore: f.scale,
            change: f.change,
            pValue: f.pValue,
            confirmedBy: f.note.includes('two runs') ? 'two runs' : 'one run',
            firstRunId: f.firstRunId,
            firstTsMs: first?.tsMs ?? runs.get(runId)?.tsMs ?? Date.now(),
            firstCommit: first?.commit,
            lastGoodRunId: f.lastGoodRunId,
            lastGoodCommit: good?.commit,
            openedRunId: runId,
            lastRunId: runId,
            lastValue: f.value,
            backRuns: 0,
          };
          await this.db.insert(ALERTS_TABLE, ALERT_COLUMNS, [rowValues(toRow(alert), ALERT_COLUMNS)]);
          opened.push(id);
          continue;
        }
        if (!current || current.lastRunId === runId) continue;
        if (f.status === 'still-regressed') {
          await this.db.exec(`UPDATE ${ALERTS_TABLE} SET last_run_id = $1, last_value = $2, back_runs = 0 WHERE alert_id = $3`, [runId, f.value, current.id]);
        } else if (f.status === 'recovered') {
          const back = current.backRuns + 1;
          const done = back >= 2;
          await this.db.exec(
            `UPDATE ${ALERTS_TABLE} SET last_run_id = $1, last_value = $2, back_runs = $3, status = $4, closed_run_id = $5, closed_ts_ms = $6 WHERE alert_id = $7`,
            [runId, f.value, back, done ? 'closed' : 'open', done ? runId : null, done ? (runs.get(runId)?.tsMs ?? Date.now()) : null, current.id],
          );
          if (done) closed.push(current.id);
        }
      }
    });
    return { opened, closed };
  }

  /** Accepts an open alert's new level: from its first run on, the series' baseline is the new level. */
  async ack(id: string, reason: string, by: string, nowMs = Date.now()): Promise<Alert | undefined> {
    const alert = await this.get(id);
    if (!alert) return undefined;
    await this.db.exec(`UPDATE ${ALERTS_TABLE} SET status = 'acked', ack_reason = $1, ack_by = $2, ack_ms = $3 WHERE alert_id = $4`, [reason, by, nowMs, id]);
    return { ...alert, status: 'acked', ackReason: reason, ackBy: by, ackMs: nowMs };
  }
}
