// The index of runs (index.html) from a real DuckDB history: one row per run, newest first, its
// counts (passed and failed from the history, skipped and not run from the run's summary.json, as
// a skip never reaches the history), the tests it regressed, a link to its report where its folder
// keeps one. `disagg-bench report --index` writes it as a run's end does, lists it with --json,
// refuses options that do not go with it (exit 2), says one line when there is no history, and
// reads a store another process holds read-only.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { withHistory } from '../../framework/history/store.ts';
import { writeIndexFromHistory } from '../../framework/history/run-index.ts';
import { indexRootOf } from '../../framework/results/index/run-index.ts';
import { indexPageHtml, MAX_INDEX_ROWS } from '../../framework/results/index/index-page.ts';

const DAY_ISO = '2026-11-28T02:00:00.000Z';
import { readSettings } from '../../framework/settings.ts';
import { entry, record } from '../fixtures/history/records.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'run-index-'));
const holders: ResultPromise[] = [];
afterEach(() => {
  for (const h of holders.splice(0)) h.kill('SIGKILL');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
/**
 * OUTPUT_PATH with a history of three runs: `night-1` (two passed), `night-2` (one passed, one
 * failed, one regressed; its folder keeps a report and a summary with two skipped tests) and
 * `imported` (no folder here, as `history import` leaves a run).
 */
async function seeded(): Promise<string> {
  const root = path.join(scratch, `out${++counter}`);
  const regressed = record({ runId: 'night-2', day: 1, testId: 'b' });
  regressed.regression = { mode: 'warn', findings: [{ metric: 'SERVER_MEDIAN_TTFT', labels: { concurrency: 8 }, unit: 'ms', value: 30, baseline: 20, threshold: 0.05, diffPercent: -50, regression: true, days: 3 }] };
  const checked = record({ runId: 'night-1', day: 0, testId: 'b' });
  checked.regression = { mode: 'warn', findings: [{ metric: 'SERVER_MEDIAN_TTFT', labels: { concurrency: 8 }, unit: 'ms', value: 20, baseline: 20, threshold: 0.05, diffPercent: 0, regression: false, days: 3 }] };
  const records = [record({ runId: 'night-1', day: 0 }), checked, record({ runId: 'night-2', day: 1, verdict: 'failed' }), regressed, { ...record({ runId: 'imported', day: -3 }), run: { id: 'imported', kind: 'pre-merge' as const, branch: 'feature' } }];
  await withHistory({ kind: 'duckdb', file: path.join(root, 'history.duckdb') }, (s) => s.append(records.map(entry)), { create: true });
  mkdirSync(path.join(root, 'runs', 'night-2'), { recursive: true });
  writeFileSync(path.join(root, 'runs', 'night-2', 'report.html'), '<html></html>');
  writeFileSync(path.join(root, 'runs', 'night-2', 'summary.json'), JSON.stringify({ version: 2, runId: 'night-2', totals: { tests: 4, passed: 1, failed: 1, skipped: 2, notRun: 0, regressed: 1 } }));
  // night-1's folder is there, its report is not (deleted, or the run's end could not write it)
  mkdirSync(path.join(root, 'runs', 'night-1'), { recursive: true });
  return root;
}

const cli = (root: string, args: string[], env: Record<string, string> = {}) =>
  execa('node', [path.join(repo, 'bin/disagg-bench.js'), 'report', ...args], { cwd: scratch, reject: false, env: { OUTPUT_PATH: root, ...env } });

describe('the index of runs', () => {
  it('one row per run of the history, newest first, with its counts, regressions and report', async () => {
    const root = await seeded();
    const outcome = await writeIndexFromHistory(readSettings({ OUTPUT_PATH: root }), root);
    expect(outcome.file).toBe(path.join(root, 'index.html'));
    expect(outcome.message).toBe(`index of runs: ${path.join(root, 'index.html')} (3 run(s))`);
    expect(outcome.rows!.map((r) => [r.runId, r.passed, r.failed, r.skipped, r.regressed, r.report])).toEqual([
      ['night-2', 1, 1, 2, 1, 'runs/night-2/report.html'],
      ['night-1', 2, 0, undefined, 0, undefined],
      ['imported', 1, 0, undefined, 0, undefined],
    ]);
    expect(outcome.rows![2]).toMatchObject({ kind: 'pre-merge', branch: 'feature', source: 'run' });
    const html = readFileSync(outcome.file!, 'utf8');
    expect(html).toMatch(/<tr class="regressed row-failed" data-run="night-2"><td class="id"><a href="runs\/night-2\/report.html">night-2<\/a>/);
    expect(html).toMatch(/<tr data-run="night-1">.*<span class="meta">not kept<\/span>/);
  });

  it('a run started by Vitest directly keeps its files in OUTPUT_PATH itself: its report there is linked', async () => {
    const root = await seeded();
    rmSync(path.join(root, 'runs'), { recursive: true });
    writeFileSync(path.join(root, 'report.html'), '<html></html>');
    writeFileSync(path.join(root, 'summary.json'), JSON.stringify({ version: 1, runId: 'night-2', totals: { skipped: 1, interrupted: 2 } }));
    const { rows } = await writeIndexFromHistory(readSettings({ OUTPUT_PATH: root }), root);
    expect(rows![0]).toMatchObject({ runId: 'night-2', report: 'report.html', skipped: 1, notRun: 2 });
    expect(rows![1].report).toBeUndefined();
  });

  it('lists the newest runs of a long history and says how many older ones it leaves out', () => {
    const rows = Array.from({ length: MAX_INDEX_ROWS + 2 }, (_, k) => ({ runId: `r${k}`, start: DAY_ISO, end: DAY_ISO, kind: 'post-merge', passed: 1, failed: 0, regressed: 0, source: 'run' }));
    const html = indexPageHtml({ rows, store: 'h' });
    expect(html.match(/<tr data-run=/g)).toHaveLength(MAX_INDEX_ROWS);
    expect(html).toContain('<p class="meta" id="older-runs">2 older run(s) not listed: `disagg-bench history runs` lists every one.</p>');
  });

  it('sits above runs/<id>/ for a run of `disagg-bench run`, in OUTPUT_PATH otherwise', () => {
    expect(indexRootOf('/out/runs/r1', 'r1')).toBe('/out');
    expect(indexRootOf('/out', 'r1')).toBe('/out');
    expect(indexRootOf('/out/runs/r1', undefined)).toBe('/out/runs/r1');
  });

  it('no history: one line, no page', async () => {
    const root = path.join(scratch, 'empty');
    mkdirSync(root, { recursive: true });
    const outcome = await writeIndexFromHistory(readSettings({ OUTPUT_PATH: root }), root);
    expect(outcome).toMatchObject({ noHistory: true, message: `index: no history yet in the DuckDB history ${path.join(root, 'history.duckdb')}: a run appends to it when it ends` });
    expect(existsSync(path.join(root, 'index.html'))).toBe(false);
    const off = await writeIndexFromHistory(readSettings({ OUTPUT_PATH: root, DISAGG_HISTORY: 'off' }), root);
    expect(off).toMatchObject({ noHistory: true, message: 'index: no history to list runs from (DISAGG_HISTORY=off)' });
  });
});

describe('disagg-bench report --index', { timeout: 120_000 }, () => {
  it('writes the index, lists its rows with --json, and reads a store another process holds read-only', async () => {
    const root = await seeded();
    const child = execa('node', ['--import', 'tsx', path.join(repo, 'tests/fixtures/history/hold-duckdb.ts'), path.join(root, 'history.duckdb'), 'read'], { cwd: repo, reject: false, buffer: false });
    holders.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      child.on('exit', (code) => reject(new Error(`holder exited ${code}`)));
    });
    const text = await cli(root, ['--index']);
    expect(text.stderr).toBe('');
    expect(text.exitCode).toBe(0);
    expect(text.stdout.trim()).toBe(`index of runs: ${path.join(root, 'index.html')} (3 run(s))`);
    const json = await cli(root, ['--index', '--json']);
    expect(json.exitCode).toBe(0);
    const rows = JSON.parse(json.stdout) as { runId: string; report?: string }[];
    expect(rows.map((r) => r.runId)).toEqual(['night-2', 'night-1', 'imported']);
    expect(rows[0].report).toBe('runs/night-2/report.html');
    // a folder given stands for OUTPUT_PATH: its own history, whatever OUTPUT_PATH says
    const elsewhere = await cli(path.join(scratch, 'elsewhere'), ['--index', root, '--json']);
    expect(elsewhere.exitCode, elsewhere.stderr).toBe(0);
    expect((JSON.parse(elsewhere.stdout) as { runId: string }[]).map((r) => r.runId)).toEqual(['night-2', 'night-1', 'imported']);
  });

  it('usage errors exit 2 in one line; no history is one line and exit 0; a broken store exit 1', async () => {
    const root = await seeded();
    const baseline = await cli(root, ['--index', '--baseline', 'old.json']);
    expect(baseline.exitCode).toBe(2);
    expect(baseline.stderr).toMatch(/^disagg-bench report: --baseline does not go with --index/);
    const json = await cli(root, ['--json']);
    expect(json.exitCode).toBe(2);
    expect(json.stderr).toMatch(/--json goes with --index/);
    const two = await cli(root, ['--index', 'a', 'b']);
    expect(two.exitCode).toBe(2);

    const empty = path.join(scratch, 'no-history');
    mkdirSync(empty, { recursive: true });
    const none = await cli(empty, ['--index']);
    expect(none.exitCode).toBe(0);
    expect(none.stderr.trim()).toMatch(/^index: no history yet in the DuckDB history \S+: a run appends to it when it ends$/);
    expect(existsSync(path.join(empty, 'index.html'))).toBe(false);

    const broken = path.join(scratch, 'broken');
    mkdirSync(broken, { recursive: true });
    writeFileSync(path.join(broken, 'history.duckdb'), 'a,b\n1,2\n'.repeat(1000));
    const bad = await cli(broken, ['--index']);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^index: not written: the DuckDB history \S+: the file is not a DuckDB database/);
  });
});
