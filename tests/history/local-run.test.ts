// A local run (the default kind: nothing set) is judged as a post-merge run of its branch would be
// (that branch's post-merge history, the post-merge threshold); it only feeds no baseline. Here on
// a branch other than main, where judging it against main's history (as a pre-merge run is) finds
// nothing and lets a 4x latency rise pass: through `history regressions` (the real bin, a real
// DuckDB file) and in a real run of the suite (a STAND-IN serving stack, the engine cannot run
// here: tests/fixtures/reliability/suite-run.ts) in a git work tree on that branch.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestRecord } from '../../framework/results/json.ts';
import { withHistory } from '../../framework/history/store.ts';
import { record } from '../fixtures/history/records.ts';
import { recordOf, removeWorkDirs, runSuite, standinConfig, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'history-local-run-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterAll(removeWorkDirs);

const DAY_MS = 86_400_000;
const BRANCH = 'dev';

const onBranch = (r: TestRecord, kind: 'post-merge' | 'pre-merge' | 'local'): TestRecord => ({ ...r, run: { ...r.run!, kind, branch: BRANCH, gate: ['SERVER_MEDIAN_TTFT'] } });

function cli(args: string[], env: Record<string, string>) {
  return execa('node', [path.join(root, 'bin/disagg-bench.js'), 'history', ...args], { cwd: scratch, env: { OUTPUT_PATH: path.join(scratch, 'out'), WORK_DIR: root, ...env }, reject: false, all: true });
}

const resultsFile = (name: string, records: TestRecord[]) => {
  const file = path.join(scratch, name);
  writeFileSync(file, JSON.stringify({ version: 1, updated: new Date().toISOString(), records }, null, 2));
  return file;
};

describe('a local run', () => {
  it("is checked against its branch's post-merge history by `history regressions`", { timeout: 120_000 }, async () => {
    const env = { DISAGG_HISTORY: path.join(scratch, 'h.duckdb') };
    // Five post-merge days of branch dev at 20 ms.
    const history = resultsFile('history.json', [0, 1, 2, 3, 4].map((d) => onBranch(record({ runId: `day${d}`, day: d }), 'post-merge')));
    expect((await cli(['import', history], env)).exitCode).toBe(0);
    // A local run of the same branch at 80 ms: 4x the latency.
    const local = resultsFile('local.json', [onBranch(record({ runId: 'local', day: 6, ttft: 80 }), 'local')]);
    const judged = await cli(['regressions', local], env);
    expect(judged.exitCode, judged.all).toBe(1);
    expect(judged.stdout).toMatch(/^REGRESSION {2}disagg_perf_model_1k1k_ccb-UCX SERVER_MEDIAN_TTFT\[concurrency=8\]: 80\.0000 ms against its level 20\.0000: \+300\.0% worse/m);
    // A pre-merge run of that branch is still judged against the baseline branch (main: no history).
    const preMerge = resultsFile('pre-merge.json', [onBranch(record({ runId: 'pr', day: 6, ttft: 80 }), 'pre-merge')]);
    const pr = await cli(['regressions', preMerge], env);
    expect(pr.exitCode, pr.all).toBe(0);
    expect(pr.stdout).toMatch(/1 test\(s\) without earlier post-merge history/);
  });

  it('fails its test on a 4x latency rise against the post-merge history of its branch, in a run', { timeout: 600_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ standin: await standinConfig({ client: 'ok' }) });
    const id = testIdOf('standin');
    const git = (...args: string[]) => execFileSync('git', ['-C', workDir, ...args], { env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
    git('init', '--quiet', `--initial-branch=${BRANCH}`);
    git('add', '-A');
    git('commit', '--quiet', '-m', 'configs');
    const store = { kind: 'duckdb' as const, file: path.join(outputPath, 'history.duckdb') };
    const gate = { DISAGG_GATE_METRICS: 'headline,SERVER_MEDIAN_TTFT' };

    // A first run (nothing set: local) of branch dev, then five earlier post-merge days of that
    // branch, 4x faster (its record, copied back in time).
    const first = await runSuite({ workDir, outputPath, scheduler: 'local', env: gate });
    expect(first.exitCode, first.output).toBe(0);
    const firstRecord = recordOf(first.records, id)!;
    expect(firstRecord.run).toMatchObject({ kind: 'local', branch: BRANCH });
    const [stored] = await withHistory(store, (s) => s.records([firstRecord.run!.id]));
    const seeds = Array.from({ length: 5 }, (_, k): TestRecord => {
      const shift = (5 - k) * DAY_MS;
      return {
        ...stored,
        timing: { ...stored.timing, start: new Date(Date.parse(stored.timing.start) - shift).toISOString(), end: new Date(Date.parse(stored.timing.end) - shift).toISOString() },
        metrics: stored.metrics.map((m) => (m.name === 'SERVER_MEDIAN_TTFT' ? { ...m, value: m.value / 4 } : m)),
        run: { ...stored.run!, id: `seed-${k}`, kind: 'post-merge' },
      };
    });
    await withHistory(store, (s) => s.append(seeds.map((r) => ({ record: r, run: r.run!, source: 'seed' }))), { create: true });

    // Nothing set: a local run, judged against branch dev's post-merge history, fails on its regression.
    const local = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_REGRESSION: 'fail', ...gate } });
    expect(local.exitCode, local.output).toBe(1);
    const judged = local.records.find((r) => r.testId === id && r.run?.id !== firstRecord.run!.id)!;
    expect(judged.regression?.findings.find((f) => f.metric === 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 20.2468, regression: true, threshold: 0.05 });
    expect(local.output).toMatch(/regression against the history: disagg_perf_standin SERVER_MEDIAN_TTFT\[concurrency=1\]: 20\.2468 ms against its level \d+\.\d+: \+\d+\.\d% worse/);
    // ...and feeds no baseline.
    const points = await withHistory(store, (s) => s.points({ testIds: [id], metric: 'SERVER_MEDIAN_TTFT' }));
    expect(points.filter((p) => p.runKind === 'local').map((p) => p.postMerge)).toEqual([false, false]);
  });
});
