// The run digest at the end of a real run: `vitest run --project nixl` as a child process on
// quick-start configs with the local scheduler (the CT perftest on shm runs for real; the EP config
// on CUDA is skipped here, this machine has no GPU). The last 25 lines of its output must say what
// passed, what was skipped and why, what regressed against what baseline and where the report is;
// summary.md and summary.json must be in the run's folder. A regression is made by seeding the
// history with faster earlier days, through the store itself.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withHistory } from '../../framework/history/store.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import type { Digest } from '../../framework/results/digest/digest.ts';
import { repoRoot, runSuite } from '../fixtures/reliability/suite-run.ts';

const DAY_MS = 86_400_000;
const examples = path.join(repoRoot, 'test_configs/nixl/perf');
const scratch = mkdtempSync(path.join(tmpdir(), 'digest-suite-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const workDir = path.join(scratch, 'work');
const outputPath = path.join(scratch, 'out');
const CT = 'nixl_perf_ct_seed_read_shm';
const EP = 'nixl_perf_ep_cuda_2gpu';

/**
 * Earlier post-merge days: the headline 1000x faster than `record`'s, every other figure 100x worse (so
 * only it regresses). The factors are far beyond run-to-run noise: the two runs of this test may differ
 * several-fold on a loaded host, and the regression must not depend on which of them was slower.
 */
function earlierDays(record: TestRecord, days: number): TestRecord[] {
  return Array.from({ length: days }, (_, k) => {
    const shift = (days - k) * DAY_MS;
    return {
      ...record,
      timing: { ...record.timing, start: new Date(Date.parse(record.timing.start) - shift).toISOString(), end: new Date(Date.parse(record.timing.end) - shift).toISOString() },
      metrics: record.metrics.map((m) => {
        if (m.name === 'AVG_LATENCY_PER_ITER_S') return { ...m, value: m.value / 1000 };
        if (m.higherIsBetter === true) return { ...m, value: m.value / 100 };
        if (m.higherIsBetter === false) return { ...m, value: m.value * 100 };
        return m;
      }),
      run: { ...record.run!, id: `seed-${k}`, kind: 'post-merge' },
      regression: undefined,
    };
  });
}

const tail = (output: string) => output.trimEnd().split('\n').slice(-25).join('\n');

describe('the run digest at the end of a run', () => {
  it('says what passed, what was skipped and why, what regressed against what baseline, where the report is', { timeout: 400_000 }, async () => {
    const configDir = path.join(workDir, 'test_configs/nixl/perf');
    mkdirSync(configDir, { recursive: true });
    cpSync(path.join(examples, 'matrices'), path.join(configDir, 'matrices'), { recursive: true });
    for (const name of ['ct_seed_read_shm', 'ep_cuda_2gpu']) cpSync(path.join(examples, `${name}.yaml`), path.join(configDir, `${name}.yaml`));
    const run = (env: Record<string, string> = {}) => runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { GPU_TYPE: undefined, ...env }, timeoutMs: 300_000 });

    // 1. A first run: the CT perftest passes, the CUDA config is skipped with its reason.
    const first = await run();
    expect(first.exitCode, first.output).toBe(0);
    const end = tail(first.output);
    expect(end).toMatch(new RegExp(`^PASSED\\s+${CT}\\s+AVG_LATENCY_PER_ITER_S \\S+ s`, 'm'));
    expect(end).toMatch(new RegExp(`^SKIPPED\\s+${EP}`, 'm'));
    expect(end).toMatch(new RegExp(`^skipped: ${EP}: .*GPU`, 'm'));
    expect(end).toMatch(/^2 test\(s\): 1 passed, 0 failed, 1 skipped, 0 regressed/m);
    expect(end).toContain(`report: ${path.join(outputPath, 'report.html')}`);
    for (const file of ['summary.md', 'summary.json']) expect(existsSync(path.join(outputPath, file)), file).toBe(true);
    const firstDigest = JSON.parse(readFileSync(path.join(outputPath, 'summary.json'), 'utf8')) as Digest;
    const ct = firstDigest.tests.find((t) => t.testId === CT)!;
    expect(ct).toMatchObject({ verdict: 'passed', headline: { metric: 'AVG_LATENCY_PER_ITER_S', unit: 's' } });
    expect(ct.runSec).toBeGreaterThan(0);
    expect(ct.queueSec).toBeGreaterThanOrEqual(0);

    // 2. Much faster earlier days: the next run's latency regresses; with DISAGG_REGRESSION=fail the test fails for it.
    const store = { kind: 'duckdb' as const, file: path.join(outputPath, 'history.duckdb') };
    const record = first.records.find((r) => r.testId === CT)!;
    const [stored] = await withHistory(store, (s) => s.records([record.run!.id]));
    await withHistory(store, (s) => s.append(earlierDays(stored, 5).map((r) => ({ record: r, run: r.run!, source: 'seed' }))), { create: true });
    // Judged as a post-merge run (the first, with no kind set, was a local one and is no baseline).
    const second = await run({ DISAGG_REGRESSION: 'fail', DISAGG_RUN_KIND: 'post-merge' });
    expect(second.exitCode, tail(second.output)).toBe(1);
    const regressed = tail(second.output);
    // the change as the latency moved (+, as "vs previous" says it), the alert the run opens
    expect(regressed).toMatch(new RegExp(`^FAILED\\s+${CT}\\s+AVG_LATENCY_PER_ITER_S \\S+ s\\s+[-+]\\d+\\.\\d%\\s+\\+\\d+\\.\\d% REGRESSED`, 'm'));
    expect(regressed).toMatch(new RegExp(`^REGRESSION ${CT}: AVG_LATENCY_PER_ITER_S \\S+ s against its level \\S+ s \\(\\+\\d+\\.\\d%, noise \\d+\\.\\d%, threshold \\d+\\.\\d%, 5 post-merge run\\(s\\)\\): alert a[0-9a-f]{8} opened; failed the test$`, 'm'));
    expect(regressed).toMatch(/^history: 1 record\(s\), \d+ metric value\(s\) appended to .*; 1 alert\(s\) opened \(a[0-9a-f]{8}\)/m);
    expect(regressed).toMatch(/^2 test\(s\): 0 passed, 1 failed, 1 skipped, 1 regressed/m);
    expect(readFileSync(path.join(outputPath, 'summary.md'), 'utf8')).toMatch(new RegExp(`## Regressions\\n\\n- ${CT}: AVG_LATENCY_PER_ITER_S`));

    // 3. The index of runs, written from the history at the run's end: this run first (of the first
    // run, the five seeded days and this one), its failure and regression counted, its report linked.
    const secondId = second.records.find((r) => r.testId === CT && r.verdict === 'failed')!.run!.id;
    expect(regressed).toContain(`runs: ${path.join(outputPath, 'index.html')}`);
    const index = readFileSync(path.join(outputPath, 'index.html'), 'utf8');
    const rows = [...index.matchAll(/<tr(?: class="([^"]*)")? data-run="([^"]+)">(.*?)<\/tr>/g)];
    expect(rows.map((m) => m[2])).toHaveLength(7);
    expect(rows[0][2]).toBe(secondId);
    expect(rows[0][1]).toBe('regressed row-failed');
    expect(rows[0][3]).toContain('<a class="report" href="report.html">report</a>');
    // passed, failed, skipped (from summary.json: a skip never reaches the history), not run, regressed
    expect([...rows[0][3].matchAll(/<td class="num[^"]*">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(['0', '1', '1', '0', '1']);
  });
});
