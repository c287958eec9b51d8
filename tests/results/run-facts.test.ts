// What a run is beside its tests, as its end gathers it: the commit and branch of WORK_DIR (a real
// git repository made here) and of this checkout, the scheduler from the job ledger, kind and
// label. The report's header shows them, summary.json keeps them, and `disagg-bench report`
// rebuilding the run's report later reads them back from summary.json.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { gatherRunFacts } from '../../framework/suite/run-facts.ts';
import { readSettings } from '../../framework/settings.ts';
import { Ledger } from '../../framework/jobs/ledger.ts';
import { renderReport } from '../../framework/results/report/render.ts';
import { saveTestRecords } from '../../framework/results/json.ts';
import { writeRunDigest } from '../../framework/results/digest/write-digest.ts';
import { run as reportCommand } from '../../framework/commands/report.ts';
import { CONFIGS_COMMIT, recordsOf, RUN_IDS } from '../fixtures/report/two-runs.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'run-facts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } }).trim();
const meta = (html: string) => Object.fromEntries([...(/<dl class="run-meta" id="run-meta">(.*?)<\/dl>/s.exec(html)?.[1] ?? '').matchAll(/<dt>([^<]+)<\/dt><dd><code>([^<]*)<\/code><\/dd>/g)].map((m) => [m[1], m[2]]));

describe("a run's facts", () => {
  it('the commit and branch of the configs and of disagg-bench, the scheduler of its jobs, kind and label', () => {
    const work = path.join(scratch, 'configs');
    mkdirSync(work, { recursive: true });
    git(work, 'init', '-q', '-b', 'nightly-configs');
    writeFileSync(path.join(work, 'a.yaml'), 'x: 1\n');
    git(work, 'add', '.');
    git(work, 'commit', '-q', '-m', 'configs');
    const out = path.join(scratch, 'out');
    mkdirSync(out, { recursive: true });
    new Ledger(out, 'run-7', 'slurm').record({ test: 't', job: '12', state: 'SUBMITTED', terminal: false, batch: 0, timeoutSec: 60 });
    new Ledger(out, 'run-6', 'local').record({ test: 't', job: '11', state: 'SUBMITTED', terminal: false, batch: 0, timeoutSec: 60 });

    const facts = gatherRunFacts(readSettings({ OUTPUT_PATH: out, WORK_DIR: work, DISAGG_RUN_KIND: 'pre-merge', DISAGG_RUN_LABEL: 'pr-123' }), 'run-7');
    expect(facts).toMatchObject({
      runId: 'run-7',
      kind: 'pre-merge',
      label: 'pr-123',
      scheduler: 'slurm',
      configs: { dir: work, commit: git(work, 'rev-parse', 'HEAD'), branch: 'nightly-configs' },
      project: { dir: repo, commit: git(repo, 'rev-parse', 'HEAD') },
    });
    expect(facts.project?.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('the report header shows them; summary.json keeps them; `disagg-bench report` rebuilds the same header from it', async () => {
    const folder = path.join(scratch, 'runs', RUN_IDS[1]);
    mkdirSync(folder, { recursive: true });
    const records = recordsOf(1);
    const facts = { runId: RUN_IDS[1], kind: 'local', scheduler: 'local', configs: { dir: '/w', commit: 'aaa111', branch: 'main' }, project: { dir: '/p', commit: 'bbb222', branch: 'dev', version: '0.1.0' } };
    // what the records say first (they carry the run's context when it keeps a history)...
    const header = meta(renderReport({ records, facts }).html);
    expect(header).toMatchObject({ run: RUN_IDS[1], 'run kind': 'post-merge', scheduler: 'local', 'configs commit': CONFIGS_COMMIT, 'configs branch': 'main', 'disagg-bench commit': 'bbb222', 'disagg-bench branch': 'dev', 'disagg-bench version': '0.1.0' });
    // ...and the facts where they say nothing (DISAGG_HISTORY=off: no run context in the records)
    const bare = meta(renderReport({ records: records.map(({ run: _, ...r }) => r), facts }).html);
    expect(bare).toMatchObject({ run: RUN_IDS[1], 'run kind': 'local', 'configs commit': 'aaa111', 'configs branch': 'main' });

    await saveTestRecords(folder, records);
    await writeRunDigest({ resultsFolder: folder, runId: RUN_IDS[1], testIds: records.map((r) => r.testId), facts });
    const summary = JSON.parse(readFileSync(path.join(folder, 'summary.json'), 'utf8'));
    expect(summary.run).toEqual({ ...facts, start: '2026-11-28T02:00:00.000Z', end: '2026-11-28T02:00:44.000Z' });

    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    vi.stubEnv('DISAGG_HISTORY', 'off');
    expect(await reportCommand([folder])).toBe(0);
    const rebuilt = meta(readFileSync(path.join(folder, 'report.html'), 'utf8'));
    expect(rebuilt).toMatchObject({ ...header, start: '2026-11-28T02:00:00.000Z', end: '2026-11-28T02:00:44.000Z' });
    // another run's record in the same results.json: the saved facts no longer describe it, the records do
    await saveTestRecords(folder, recordsOf(0));
    expect(await reportCommand([folder])).toBe(0);
    const mixed = meta(readFileSync(path.join(folder, 'report.html'), 'utf8'));
    expect(mixed.run).toBe(`${RUN_IDS[1]}, ${RUN_IDS[0]}`);
    expect(mixed.scheduler).toBeUndefined();
  });
});
