// The run digest from a run's results.json: one line per test with its headline figure and its
// changes, regressions with their baselines, skipped and interrupted tests, totals and files, as
// summary.json, summary.md and the terminal's last lines.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { saveTestRecords, type TestRecord } from '../../framework/results/json.ts';
import { writeRunDigest } from '../../framework/results/digest/write-digest.ts';
import { previousKey, SUMMARY_JSON_VERSION } from '../../framework/results/digest/digest.ts';
import { figure } from '../../framework/results/digest/digest-text.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'digest-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, s)).toISOString();
const RUN = 'run-b';

function record(testId: string, over: Partial<TestRecord>): TestRecord {
  return {
    testId, type: 'nixl', category: 'perf', configPath: `test_configs/nixl/perf/${testId}.yaml`, jobId: '17', schedulerState: 'COMPLETED',
    verdict: 'passed', failures: [], metrics: [], timing: { start: at(0), end: at(30), durationSec: 30 }, host: 'h',
    logDir: `/out/slurm_logs/${testId}`, run: { id: RUN, kind: 'post-merge' }, ...over,
  };
}

const bw = { name: 'BW_GBPS', value: 12.5, unit: 'GB/s', higherIsBetter: true, labels: { block_size: 1048576, op_type: 'READ' } };
const lat = { name: 'AVG_LATENCY_PER_ITER_S', value: 0.000123456, unit: 's', higherIsBetter: false, labels: {} };
const records: TestRecord[] = [
  // an earlier run's record of the same test: not this run's
  record('sweep', { run: { id: 'run-a', kind: 'post-merge' }, metrics: [{ ...bw, value: 99 }], headline: [{ name: 'BW_GBPS', labels: bw.labels }], timing: { start: at(0), end: at(1), durationSec: 1 } }),
  record('sweep', { metrics: [bw], headline: [{ name: 'BW_GBPS', labels: bw.labels }], job: { queueSec: 0.4, runSec: 21.3 } }),
  record('ct', {
    metrics: [lat], headline: [{ name: 'AVG_LATENCY_PER_ITER_S', labels: {} }], verdict: 'failed',
    failures: ['regression against the history: ct AVG_LATENCY_PER_ITER_S'],
    regression: { mode: 'fail', findings: [{ metric: lat.name, labels: {}, unit: 's', value: lat.value, baseline: 0.0001, threshold: 0.05, diffPercent: -23.456, regression: true, days: 5 }] },
  }),
  record('gpu_only', { jobId: null, verdict: 'skipped', skipReason: 'needs a GPU of H200, B200; this machine has none (GPU_TYPE unset)', run: undefined }),
];

describe('the run digest', () => {
  test('a table line per test, regressions with their baseline, skipped tests and tests not run, totals, files', async () => {
    await saveTestRecords(scratch, records);
    const previous = new Map([[previousKey('sweep', 'BW_GBPS', bw.labels), { value: 10, runId: 'run-a' }]]);
    const report = path.join(scratch, 'report.html');
    const { digest, text } = await writeRunDigest({
      resultsFolder: scratch, runId: RUN, testIds: ['sweep', 'ct', 'gpu_only', 'cut_short'],
      interrupted: new Map([['cut_short', 'the run was interrupted (SIGINT)']]), report, previous, resume: 'RESUME=1 <the same command>',
    });

    expect(digest.version).toBe(SUMMARY_JSON_VERSION);
    expect(digest.totals).toEqual({ tests: 4, passed: 1, failed: 1, skipped: 1, notRun: 1, regressed: 1 });
    expect(digest.tests.find((t) => t.testId === 'cut_short')).toMatchObject({ verdict: 'not run', failures: ['the run was interrupted (SIGINT)'] });
    const sweep = digest.tests.find((t) => t.testId === 'sweep')!;
    expect(sweep.headline).toMatchObject({ metric: 'BW_GBPS', value: 12.5, previous: { value: 10, runId: 'run-a', changePercent: 25 } });
    expect(sweep).toMatchObject({ queueSec: 0.4, runSec: 21.3 });
    expect(digest.tests.find((t) => t.testId === 'ct')!.headline).toMatchObject({ regression: true, baseline: { value: 0.0001, diffPercent: -23.456, thresholdPercent: 5 } });

    // the terminal: what a reader of the log's tail needs, the totals and the report last
    const lines = text.trimEnd().split('\n');
    expect(lines.find((l) => l.startsWith('PASSED'))).toMatch(/^PASSED\s+sweep\s+BW_GBPS\{block_size=1048576,op_type=READ\} 12\.5 GB\/s\s+\+25\.0%\s+-\s+21 s\s+0\.4 s$/);
    expect(lines.find((l) => l.startsWith('FAILED'))).toMatch(/^FAILED\s+ct\s+AVG_LATENCY_PER_ITER_S 0\.0001235 s\s+-\s+\+23\.5% REGRESSED/); // a latency up is +, as in "vs previous"
    expect(text).toContain("REGRESSION ct: AVG_LATENCY_PER_ITER_S 0.0001235 s against baseline 0.0001 s (-23.5% as upstream states it, positive = better; threshold 5.0%; baseline from 5 day(s) of post-merge history, upstream's rule): failed the test");
    expect(text).toContain('skipped: gpu_only: needs a GPU of H200, B200; this machine has none (GPU_TYPE unset)');
    expect(text).toMatch(/^NOT RUN\s+cut_short\s/m);
    expect(text).not.toContain('vs baseline: no figure'); // one figure has its baseline
    expect(text).toContain('not run: cut_short; continue with: RESUME=1 <the same command>');
    expect(lines.at(-3)).toBe(`4 test(s): 1 passed, 1 failed, 1 skipped, 1 not run, 1 regressed (run ${RUN})`);
    expect(lines.at(-2)).toBe(`report: ${report}`);
    expect(lines.at(-1)).toBe(`summary: ${path.join(scratch, 'summary.md')}`);

    // the same digest in the run's folder
    expect(JSON.parse(readFileSync(path.join(scratch, 'summary.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(digest)));
    const md = readFileSync(path.join(scratch, 'summary.md'), 'utf8');
    expect(md).toContain('| PASSED | sweep | BW_GBPS{block_size=1048576,op_type=READ} 12.5 GB/s | +25.0% | - | 21 s | 0.4 s |');
    expect(md).toMatch(/## Regressions\n\n- ct: AVG_LATENCY_PER_ITER_S/);
    expect(md).toMatch(/## Skipped\n\n- gpu_only: needs a GPU/);
    expect(md).toMatch(/## Not run\n\n- cut_short: continue with `RESUME=1 <the same command>`/);
  });

  test('a run none of whose figures has a baseline says why under the table, naming its run kind', async () => {
    const folder = mkdtempSync(path.join(scratch, 'no-baseline-'));
    await saveTestRecords(folder, [record('sweep', { metrics: [bw], headline: [{ name: 'BW_GBPS', labels: bw.labels }], run: { id: RUN, kind: 'local' } })]);
    const { text } = await writeRunDigest({ resultsFolder: folder, runId: RUN, testIds: ['sweep'], facts: { runId: RUN, kind: 'local' } });
    const lines = text.split('\n');
    const row = lines.findIndex((l) => l.startsWith('PASSED'));
    expect(lines[row + 1]).toBe(
      'vs baseline: no figure has a baseline yet: baselines come from earlier post-merge runs of the same test (docs/history.md); this run is local, never a baseline itself (--run-kind post-merge makes one)',
    );
  });

  test('figures keep 4 significant digits and never print 0 for a small value', () => {
    expect(figure(0.000123456)).toBe('0.0001235');
    expect(figure(1629.56)).toBe('1630');
    expect(figure(4.2e-7)).toBe('4.200e-7');
    expect(figure(0)).toBe('0');
  });
});
