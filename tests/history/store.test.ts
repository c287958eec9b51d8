// The history store against the REAL backends: a DuckDB file and a PostgreSQL 15 server started
// from Debian's package (scripts/postgres-local.ts) in a temporary folder and stopped after.
// Same tests for both: append and read back, appends that repeat add nothing, the per-day series
// the baselines use, two runs writing at once (two processes) losing nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryTarget } from '../../framework/settings.ts';
import { withHistory } from '../../framework/history/store.ts';
import { caseKey, seriesId } from '../../framework/history/series-key.ts';
import { seriesBaseline } from '../../framework/history/baseline.ts';
import { HISTORY_SCHEMA_VERSION } from '../../framework/history/schema.ts';
import { startPostgres, type LocalPostgres } from '../../scripts/postgres-local.ts';
import { DAY0, DAY_MS, entries, entry, record } from '../fixtures/history/records.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'history-store-'));
let postgres: LocalPostgres | undefined;
beforeAll(async () => {
  postgres = await startPostgres({ fsync: false });
}, 120_000);
afterAll(() => {
  postgres?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

let counter = 0;
/** A fresh, empty store of each kind. */
const backends: Record<string, () => HistoryTarget> = {
  duckdb: () => ({ kind: 'duckdb', file: path.join(scratch, `h${++counter}.duckdb`) }),
  postgres: () => ({ kind: 'postgres', url: postgres!.createDatabase(`h${++counter}`) }),
};
const worker = path.resolve(import.meta.dirname, '../fixtures/history/append-worker.ts');

describe.each(Object.keys(backends))('history store on %s', (backend) => {
  it('appends records and reads them back as results.json has them', async () => {
    const target = backends[backend]();
    const r = record({ runId: 'run-1', day: 3, ttft: 21.5 });
    r.run = { ...r.run!, label: 'nightly', commit: 'abc123', branch: 'main', ci: { BUILD_ID: '42' }, thresholds: { SERVER_MEDIAN_TTFT: { postMerge: 0.03, preMerge: 0.03 } } };
    r.regression = { mode: 'warn', findings: [], skipped: 'no history yet' };
    const appended = await withHistory(target, (store) => store.append([entry(r)]), { create: true });
    expect(appended).toEqual({ tests: 1, metrics: 3, alreadyThere: 0 });
    const [back] = await withHistory(target, (store) => store.records(['run-1']));
    expect(back).toEqual({ ...r, logDir: undefined, problems: undefined, metrics: expect.arrayContaining(r.metrics) } as never);
    expect(back.metrics).toHaveLength(3);
    const runs = await withHistory(target, (store) => store.runs());
    expect(runs).toEqual([expect.objectContaining({ runId: 'run-1', kind: 'post-merge', label: 'nightly', commit: 'abc123', tests: 1 })]);
  });

  it('adds nothing when the same records are appended again', async () => {
    const target = backends[backend]();
    const batch = entries([{ runId: 'a', day: 1 }, { runId: 'b', day: 2 }]);
    await withHistory(target, (store) => store.append(batch), { create: true });
    const again = await withHistory(target, (store) => store.append([...batch, ...entries([{ runId: 'c', day: 3 }])]), { create: true });
    expect(again).toEqual({ tests: 1, metrics: 3, alreadyThere: 2 });
    expect((await withHistory(target, (store) => store.runs())).map((r) => r.runId)).toEqual(['a', 'b', 'c']);
  });

  it('computes baselines in one query from valid post-merge values before the run, the checked run and its value left out', async () => {
    const target = backends[backend]();
    await withHistory(
      target,
      (store) =>
        store.append(
          entries([
            { runId: 'd1a', day: 1, ttft: 10 },
            { runId: 'd1b', day: 1, ttft: 14 }, // same day: averaged with the one above
            { runId: 'd2', day: 2, ttft: 30 },
            { runId: 'pre', day: 2, ttft: 99, kind: 'pre-merge' }, // pre-merge: never history
            { runId: 'bad', day: 2, ttft: 99, verdict: 'failed' }, // not valid
            { runId: 'old', day: -95, ttft: 99 }, // outside the window
            { runId: 'self', day: 3, ttft: 99 }, // the run being checked
            { runId: 'other', day: 2, ttft: 99, testId: 'disagg_perf_other' },
          ]),
        ),
      { create: true },
    );
    const key = caseKey({ testId: 'disagg_perf_model_1k1k_ccb-UCX', gpuType: 'H100', identity: { backend: 'UCX' }, labels: { concurrency: 8 } });
    const id = seriesId(key, 'SERVER_MEDIAN_TTFT');
    const now = DAY0 + 3 * DAY_MS + 11 * 3_600_000;
    const baselines = await withHistory(target, (store) =>
      store.baselines({ fromMs: DAY0 - 80 * DAY_MS, toMs: DAY0 + 3 * DAY_MS, excludeRunId: 'self', points: [{ seriesId: id, tsMs: now, value: 40 }, { seriesId: 12345, tsMs: now, value: 1 }] }),
    );
    // history only: daily means [12, 30], smoothed [12, 21]: P5 12.45, P95 20.55; median 21, sd 12.73
    const expected = seriesBaseline(id, { days: [1, 2], sums: [24, 30], counts: [2, 1] });
    expect(baselines.get(id)).toEqual({ ...expected, p5: expect.closeTo(expected.p5, 9), p95: expect.closeTo(expected.p95, 9), median: expect.closeTo(21, 9), sd: expect.closeTo(Math.sqrt(162), 9) });
    expect(expected).toMatchObject({ days: 2, historyValues: 3, lastDay: 30 });
    expect(expected.p5).toBeCloseTo(12.45, 9);
    expect(baselines.has(12345)).toBe(false); // a series without history has no baseline
    // A stored run checked where it is gives what sending its values gives ('self': 99 ms on day 3, 10:30).
    const window = { fromMs: DAY0 - 80 * DAY_MS, toMs: DAY0 + 3 * DAY_MS };
    const where = await withHistory(target, (store) => store.baselines({ ...window, storedRunId: 'self', points: [] }));
    const sent = await withHistory(target, (store) => store.baselines({ ...window, excludeRunId: 'self', points: [{ seriesId: id, tsMs: DAY0 + 3 * DAY_MS + 10.5 * 3_600_000, value: 99 }] }));
    expect(where.get(id)).toEqual(sent.get(id));
    expect(where.get(id)).toMatchObject({ historyValues: 3, days: 2 });
    const points = await withHistory(target, (store) => store.points({ testIds: ['disagg_perf_model_1k1k_ccb-UCX'], metric: 'SERVER_MEDIAN_TTFT' }));
    expect(points.map((p) => p.value)).toEqual([99, 10, 14, 99, 30, 99, 99]); // by time, then run id
    expect(points.find((p) => p.runId === 'pre')).toMatchObject({ postMerge: false, runKind: 'pre-merge' });
    expect(points.find((p) => p.runId === 'bad')?.valid).toBe(false);
  });

  it("reads the gate's run values: one per run (a run's repeats averaged), oldest first, the checked run and pre-merge runs left out; writes a run's verdicts back", async () => {
    const target = backends[backend]();
    const ttft = (value: number) => ({ name: 'SERVER_MEDIAN_TTFT', value, unit: 'ms', higherIsBetter: false, labels: { concurrency: 8 } });
    await withHistory(
      target,
      (store) =>
        store.append(
          entries([
            { runId: 'r2', day: 2, ttft: 30 },
            { runId: 'r1', day: 1, ttft: 10, extra: [ttft(14)] }, // measured twice in one run: 12
            { runId: 'pre', day: 2, ttft: 99, kind: 'pre-merge' },
            { runId: 'self', day: 3, ttft: 99 },
          ]),
        ),
      { create: true },
    );
    const id = seriesId(caseKey({ testId: 'disagg_perf_model_1k1k_ccb-UCX', gpuType: 'H100', identity: { backend: 'UCX' }, labels: { concurrency: 8 } }), 'SERVER_MEDIAN_TTFT');
    const window = { fromMs: DAY0 - 80 * DAY_MS, toMs: DAY0 + 3 * DAY_MS };
    const stored = await withHistory(target, (store) => store.runValues({ ...window, storedRunId: 'self', points: [] }));
    expect(stored.get(id)?.map((p) => [p.runId, p.value])).toEqual([
      ['r1', 12],
      ['r2', 30],
    ]);
    expect(stored.get(id)![0].tsMs).toBeLessThan(stored.get(id)![1].tsMs);
    const sent = await withHistory(target, (store) => store.runValues({ ...window, excludeRunId: 'self', points: [{ seriesId: id, tsMs: DAY0 + 3 * DAY_MS, value: 99 }] }));
    expect(sent.get(id)).toEqual(stored.get(id));
    const regression = { mode: 'warn' as const, findings: [], skipped: 'judged after its import' };
    await withHistory(target, (store) => store.setRegressions('self', [{ testId: 'disagg_perf_model_1k1k_ccb-UCX', regression }]), { create: true });
    const [self] = await withHistory(target, (store) => store.records(['self']));
    expect(self.regression).toEqual(regression);
    const [other] = await withHistory(target, (store) => store.records(['r2']));
    expect(other.regression).toBeUndefined();
  });

  it('gives the baselines the JS reference gives, on 200 random series', async () => {
    const target = backends[backend]();
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const specs = Array.from({ length: 600 }, (_, k) => ({ runId: `r${k}`, day: Math.floor(random() * 30), testId: `disagg_perf_t${k % 100}`, concurrency: 1 + (k % 2), ttft: 10 + random() * 10, throughput: 900 + random() * 200 }));
    await withHistory(target, (store) => store.append(entries(specs)), { create: true });
    const points = [...new Set(specs.map((s) => `${s.testId}|${s.concurrency}`))].flatMap((t) => {
      const [testId, concurrency] = t.split('|');
      const key = caseKey({ testId, gpuType: 'H100', identity: { backend: 'UCX' }, labels: { concurrency: Number(concurrency) } });
      return ['SERVER_MEDIAN_TTFT', 'SERVER_OUTPUT_TOKEN_THROUGHPUT'].map((metric, m) => ({ seriesId: seriesId(key, metric), tsMs: DAY0 + 40 * DAY_MS, value: m ? 1000 : 15, testId, concurrency: Number(concurrency), metric }));
    });
    const got = await withHistory(target, (store) => store.baselines({ fromMs: DAY0, toMs: DAY0 + 40 * DAY_MS, points }));
    expect(got.size).toBe(points.filter((p) => specs.some((s) => s.testId === p.testId && s.concurrency === p.concurrency)).length);
    for (const p of points) {
      const mine = specs.filter((s) => s.testId === p.testId && s.concurrency === p.concurrency);
      const byDay = new Map<number, number[]>();
      for (const s of mine) byDay.set(DAY0 / DAY_MS + s.day, [...(byDay.get(DAY0 / DAY_MS + s.day) ?? []), p.metric === 'SERVER_MEDIAN_TTFT' ? s.ttft : s.throughput]);
      const days = [...byDay.keys()];
      const want = seriesBaseline(p.seriesId, { days, sums: days.map((d) => byDay.get(d)!.reduce((a, b) => a + b, 0)), counts: days.map((d) => byDay.get(d)!.length) });
      const have = got.get(p.seriesId)!;
      expect(have.days).toBe(want.days);
      expect(have.historyValues).toBe(want.historyValues);
      expect(have.p95).toBeCloseTo(want.p95, 9);
      expect(have.p5).toBeCloseTo(want.p5, 9);
      expect(have.median).toBeCloseTo(want.median, 9);
      expect(have.sd).toBeCloseTo(want.sd, 9);
      expect(have.lastDay).toBeCloseTo(want.lastDay, 9);
    }
  });

  it('loses nothing when two runs write at once (two processes)', { timeout: 120_000 }, async () => {
    const target = backends[backend]();
    const arg = target.kind === 'duckdb' ? target.file : target.kind === 'postgres' ? target.url : '';
    const start = path.join(scratch, `start-${counter}`);
    const run = (id: string) => execa('npx', ['tsx', worker, arg, id, '4', '50', start], { cwd: path.resolve(import.meta.dirname, '../..'), all: true, reject: false });
    const both = [run('writer-a'), run('writer-b')];
    await new Promise((r) => setTimeout(r, 1500)); // both started and waiting on the start file
    writeFileSync(start, '');
    const results = await Promise.all(both);
    for (const r of results) expect(r.exitCode, r.all).toBe(0);
    const runs = await withHistory(target, (store) => store.runs());
    expect(runs.map((r) => [r.runId, r.tests])).toEqual(expect.arrayContaining([['writer-a', 200], ['writer-b', 200]]));
    const records = await withHistory(target, (store) => store.records(['writer-a', 'writer-b']));
    expect(records).toHaveLength(400);
    expect(records.every((r) => r.metrics.length === 3)).toBe(true);
  });
});

describe('stores that cannot be used: one sentence naming the store and what to do', () => {
  it('a file that is not a DuckDB database', async () => {
    const file = path.join(scratch, 'not-duckdb.duckdb');
    writeFileSync(file, 'a,b\n1,2\n'.repeat(1000));
    await expect(withHistory({ kind: 'duckdb', file }, (s) => s.runs(), { create: true })).rejects.toThrow(
      new RegExp(`^the DuckDB history ${file}: the file is not a DuckDB database this version can read \\(.*\\); move ${file} aside \\(or set DISAGG_HISTORY to another file\\) and the next run starts a new history$`),
    );
  });

  it('a DuckDB database of something else', async () => {
    const file = path.join(scratch, 'foreign.duckdb');
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    await connection.run('CREATE TABLE users (name TEXT)');
    connection.closeSync();
    instance.closeSync();
    await expect(withHistory({ kind: 'duckdb', file }, (s) => s.runs(), { create: true })).rejects.toThrow(
      `the DuckDB history ${file}: it is a DuckDB database of something else (tables users), not a disagg-bench history; set DISAGG_HISTORY to another file (or move this one aside)`,
    );
  });

  it('a missing DuckDB file is "no history yet" for a reader, created by a writer', async () => {
    const file = path.join(scratch, 'missing', 'history.duckdb');
    await expect(withHistory({ kind: 'duckdb', file }, (s) => s.runs())).rejects.toMatchObject({ empty: true, message: expect.stringMatching(/the file does not exist; run the suite once/) });
    await expect(withHistory({ kind: 'duckdb', file }, (s) => s.runs(), { create: true })).resolves.toEqual([]);
  });

  it.each(Object.keys(backends))('a %s history written by a newer version', async (backend) => {
    const target = backends[backend]();
    await withHistory(target, (s) => s.append(entries([{ runId: 'a', day: 1 }])), { create: true });
    if (target.kind === 'duckdb') {
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const instance = await DuckDBInstance.create(target.file);
      const connection = await instance.connect();
      await connection.run("UPDATE disagg_history_meta SET value = '99' WHERE key = 'schema_version'");
      connection.closeSync();
      instance.closeSync();
    } else if (target.kind === 'postgres') {
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      await client.query("UPDATE disagg_history_meta SET value = '99' WHERE key = 'schema_version'");
      await client.end();
    }
    await expect(withHistory(target, (s) => s.runs(), { create: true })).rejects.toThrow(
      new RegExp(`^the (DuckDB|PostgreSQL) history \\S+: it was written by a newer disagg-bench \\(history schema 99; this version reads ${HISTORY_SCHEMA_VERSION}\\); upgrade disagg-bench, or set DISAGG_HISTORY to another store$`),
    );
  });

  it('a PostgreSQL server that does not answer, its password never shown', async () => {
    process.env.DISAGG_HISTORY_CONNECT_TIMEOUT_SEC = '3';
    try {
      await expect(withHistory({ kind: 'postgres', url: 'postgres://ci:s3cret@127.0.0.1:1/history' }, (s) => s.runs())).rejects.toThrow(
        /^the PostgreSQL history postgres:\/\/ci@127\.0\.0\.1:1\/history: no server answers there \(.*ECONNREFUSED.*\); start the server or correct DISAGG_HISTORY \(DISAGG_HISTORY=off runs without history\)$/,
      );
    } finally {
      delete process.env.DISAGG_HISTORY_CONNECT_TIMEOUT_SEC;
    }
  });
});
