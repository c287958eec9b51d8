// Who may open a DuckDB history while another process holds it (real DuckDB files, real second
// processes): readers open it read-only and take no lock of ours, so a process holding it
// read-only stops no command and no run; a run whose store another process holds for writing
// waits a bounded time, then keeps its records in the pending file that the next writer appends
// (so does `history import`, saying so and exiting 3);
// a store that cannot be written is one line at once. A schema-1 history is upgraded in place.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { withHistory } from '../../framework/history/store.ts';
import { appendRunsToHistory } from '../../framework/history/run-end.ts';
import { readSettings } from '../../framework/settings.ts';
import { saveTestRecords } from '../../framework/results/json.ts';
import { readPending } from '../../framework/history/pending.ts';
import { entries, record } from '../fixtures/history/records.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'history-access-'));
const root = path.resolve(import.meta.dirname, '../..');
const holder = path.join(root, 'tests/fixtures/history/hold-duckdb.ts');
const cli = path.join(root, 'bin/disagg-bench.js');
const holders: ResultPromise[] = [];
afterEach(() => {
  for (const h of holders.splice(0)) h.kill('SIGKILL');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
/** A fresh OUTPUT_PATH with a history of one run in its DuckDB file. */
async function seeded() {
  const out = path.join(scratch, `out${++counter}`);
  const file = path.join(out, 'history.duckdb');
  await withHistory({ kind: 'duckdb', file }, (s) => s.append(entries([{ runId: 'old', day: 0 }])), { create: true });
  return { out, file };
}

/** Starts a process holding the file; resolves once it says so. */
async function hold(file: string, mode: 'read' | 'write') {
  const child = execa('node', ['--import', 'tsx', holder, file, mode], { cwd: root, reject: false, buffer: false });
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
    child.on('exit', (code) => reject(new Error(`holder exited ${code}`)));
  });
}

const run = (out: string, args: string[], env: Record<string, string> = {}) => execa('node', [cli, ...args], { cwd: scratch, reject: false, env: { OUTPUT_PATH: out, ...env } });

describe('a DuckDB history another process holds', () => {
  it('held read-only (a notebook): `history runs` works and a run appends', { timeout: 400_000 }, async () => {
    const { out, file } = await seeded();
    await hold(file, 'read');
    const runs = await run(out, ['history', 'runs']);
    expect(runs.stderr).toBe('');
    expect(runs.exitCode).toBe(0);
    expect(runs.stdout).toMatch(/1 run\(s\)$/);
    // A run's end: DuckDB lets no writer in beside a reader, so after the bounded wait the records
    // are kept in the pending file, in one line, and the next writer appends them.
    await saveTestRecords(out, [record({ runId: 'new', day: 1 })]);
    const settings = readSettings({ OUTPUT_PATH: out, DISAGG_HISTORY_LOCK_WAIT_SEC: '1' });
    const t0 = Date.now();
    const ended = await appendRunsToHistory(settings, 'new');
    expect(Date.now() - t0).toBeLessThan(60_000); // 1 s of waiting, on a loaded machine
    expect(ended).toMatchObject({ ok: false });
    expect(ended!.message).toMatch(/^history: 1 record\(s\) kept in \S+history\.duckdb\.pending\.jsonl \(appended by the next run or `disagg-bench history import`\): another process \(PID \d+\) holds the file/);
    expect(existsSync(`${file}.pending.jsonl`)).toBe(true);
    for (const h of holders.splice(0)) h.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const imported = await run(out, ['history', 'import']);
    expect(imported.stdout).toMatch(/1 record\(s\) and 3 metric value\(s\) appended/);
    expect(imported.exitCode).toBe(0);
    expect(existsSync(`${file}.pending.jsonl`)).toBe(false);
    expect((await withHistory({ kind: 'duckdb', file }, (s) => s.runs())).map((r) => r.runId)).toEqual(['old', 'new']);
  });

  it('held for writing: readers and the run wait a bounded time and say so in one line', { timeout: 400_000 }, async () => {
    const { out, file } = await seeded();
    await hold(file, 'write');
    const runs = await run(out, ['history', 'runs'], { DISAGG_HISTORY_LOCK_WAIT_SEC: '1' });
    expect(runs.exitCode).toBe(3);
    expect(runs.stderr.trim().split('\n')).toHaveLength(1);
    expect(runs.stderr).toMatch(/another process \(PID \d+\) holds the file for writing and did not let go in 1 s; try again when it is done/);
    await saveTestRecords(out, [record({ runId: 'new', day: 1 })]);
    const ended = await appendRunsToHistory(readSettings({ OUTPUT_PATH: out, DISAGG_HISTORY_LOCK_WAIT_SEC: '1' }), 'new');
    expect(ended!.message).toMatch(/kept in .*pending\.jsonl/);
    // the next run's end appends the kept records with its own
    for (const h of holders.splice(0)) h.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    await saveTestRecords(out, [record({ runId: 'next', day: 2 })]);
    const next = await appendRunsToHistory(readSettings({ OUTPUT_PATH: out }), 'next');
    expect(next).toMatchObject({ ok: true });
    expect((await withHistory({ kind: 'duckdb', file }, (s) => s.runs())).map((r) => r.runId)).toEqual(['old', 'new', 'next']);
  });

  it('held for writing: `history import` keeps the files\' records in the pending file, says so, exits 3; the next import appends them', { timeout: 400_000 }, async () => {
    const { out, file } = await seeded();
    const results = path.join(scratch, `import${counter}.json`);
    writeFileSync(results, JSON.stringify({ version: 1, updated: new Date().toISOString(), records: [record({ runId: 'imported', day: 1 }), record({ runId: 'imported', day: 1, testId: 'disagg_perf_other' })] }));
    await hold(file, 'write');
    const refused = await run(out, ['history', 'import', results], { DISAGG_HISTORY_LOCK_WAIT_SEC: '1' });
    expect(refused.exitCode).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^disagg-bench history import: 2 record\(s\) kept in \S+history\.duckdb\.pending\.jsonl \(appended by the next run or `disagg-bench history import`\): another process \(PID \d+\) holds the file/);
    expect(readPending(`${file}.pending.jsonl`).map((e) => [e.run.id, e.record.testId])).toEqual([['imported', 'disagg_perf_model_1k1k_ccb-UCX'], ['imported', 'disagg_perf_other']]);
    for (const h of holders.splice(0)) h.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    // Nothing named: the kept records are appended, and the pending file is gone.
    const next = await run(out, ['history', 'import']);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/2 record\(s\) and 6 metric value\(s\) appended/);
    expect(existsSync(`${file}.pending.jsonl`)).toBe(false);
    expect((await withHistory({ kind: 'duckdb', file }, (s) => s.runs())).map((r) => [r.runId, r.tests])).toEqual([['old', 1], ['imported', 2]]);
  });

  it('a store that cannot be written: one line at once, no retries', async () => {
    const blocker = path.join(scratch, 'a-file');
    writeFileSync(blocker, '');
    const t0 = Date.now();
    const error = await withHistory({ kind: 'duckdb', file: path.join(blocker, 'history.duckdb') }, async () => 0, { create: true }).catch((e: Error) => e);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect((error as Error).message).toMatch(/^the DuckDB history \S+: its folder cannot be created \((ENOTDIR|EEXIST)\)/);
  });

  it('a history of schema 1 is upgraded when a reader first opens it, its values kept', async () => {
    const file = path.join(scratch, 'v1.duckdb');
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();
    await c.run(`CREATE TABLE disagg_history_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    await c.run(`INSERT INTO disagg_history_meta VALUES ('schema_version', '1'), ('writer', 'disagg-bench')`);
    await c.run(`CREATE TABLE disagg_history_tests (run_id TEXT, test_id TEXT, run_kind TEXT, run_label TEXT, git_commit TEXT, git_branch TEXT, ci TEXT, test_type TEXT, category TEXT, config_file TEXT, gpu_type TEXT, identity TEXT, verdict TEXT, valid BOOLEAN, job_id TEXT, scheduler_state TEXT, start_ms BIGINT, end_ms BIGINT, host TEXT, failures TEXT, regression TEXT, source TEXT, appended_ms BIGINT, PRIMARY KEY (run_id, test_id))`);
    await c.run(`CREATE TABLE disagg_history_metrics (run_id TEXT, test_id TEXT, case_key TEXT, series_id BIGINT, metric TEXT, labels TEXT, value DOUBLE, unit TEXT, higher_is_better BOOLEAN, ts_ms BIGINT, post_merge BOOLEAN, valid BOOLEAN, threshold_post DOUBLE, threshold_pre DOUBLE)`);
    await c.run(`INSERT INTO disagg_history_tests VALUES ('r1', 't1', 'post-merge', NULL, 'abc', 'main', '{}', 'disagg', 'perf', 'c.yaml', 'H100', '{}', 'passed', true, 'j', 'COMPLETED', 0, 1000, 'h', '[]', NULL, 'run', 0)`);
    await c.run(`INSERT INTO disagg_history_metrics VALUES ('r1', 't1', 'k', 1, 'M', '{}', 5, 'ms', false, 1000, true, true, NULL, NULL)`);
    c.closeSync();
    instance.closeSync();
    const records = await withHistory({ kind: 'duckdb', file }, (s) => s.records(['r1']));
    expect(records[0]).toMatchObject({ testId: 't1', metrics: [{ name: 'M', value: 5 }], run: { branch: 'main' } });
    expect(records[0].run!.gate).toBeUndefined();
  });
});
