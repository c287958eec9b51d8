// `disagg-bench history ...` as a user runs it (the real bin, a real DuckDB file; the PostgreSQL
// backend runs the same commands in store.test.ts's sense through the same store): import of
// results.json and of perf_script_test_results.csv in upstream's and this project's row naming,
// regressions, show, runs, compare (compare_kv_perf_runs.py's CSV), compare-backends
// (compare_backends.py's pairs and exit code), the OpenSearch export, --help, bad input.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { PERF_CSV_COLUMNS, perfRowsFor } from '../../framework/results/csv.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { documentId } from '../../framework/history/opensearch.ts';
import { parseRowName } from '../../framework/history/upstream-csv.ts';
import { subcommands } from '../../framework/commands/history.ts';
import { schedulerNameProblem } from '../../framework/scheduler/create.ts';
import { DAY0, DAY_MS, record } from '../fixtures/history/records.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'history-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}) {
  return execa('node', [path.join(root, 'bin/disagg-bench.js'), 'history', ...args], {
    cwd: scratch,
    env: { OUTPUT_PATH: path.join(scratch, 'out'), WORK_DIR: root, ...env },
    reject: false,
    all: true,
  });
}

const resultsFile = (name: string, records: TestRecord[]) => {
  const file = path.join(scratch, name);
  writeFileSync(file, JSON.stringify({ version: 1, updated: new Date().toISOString(), records }, null, 2));
  return file;
};

describe('disagg-bench history', () => {
  it('every command has --help', { timeout: 300_000 }, async () => {
    for (const name of Object.keys(subcommands)) {
      const r = await cli([name, '--help']);
      expect(r.exitCode, r.all).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: disagg-bench history ${name}`));
    }
    const top = await cli(['--help']);
    expect(top.stdout).toMatch(/compare-backends/);
    const bad = await cli(['regressions', '--bogus']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/^disagg-bench history regressions: unknown option "--bogus"/);
  });

  it('imports results, finds regressions against the history before a run, shows, lists and compares runs', { timeout: 300_000 }, async () => {
    const db = path.join(scratch, 'h1.duckdb');
    // These records carry no gate list (as an older version wrote them): every metric with a direction gates.
    const env = { DISAGG_GATE_RULE: 'upstream', DISAGG_HISTORY: db, DISAGG_GATE_METRICS: 'all' };
    // Five post-merge days at 20 ms / 1000 tok/s, then a run at 30 ms (TTFT regressed) and 1200 tok/s.
    const history = resultsFile('history.json', [0, 1, 2, 3, 4].map((d) => record({ runId: `day${d}`, day: d })));
    const latest = record({ runId: 'latest', day: 6, ttft: 30, throughput: 1200 });
    latest.run!.label = 'candidate';
    const candidate = resultsFile('candidate.json', [latest]);

    const imported = await cli(['import', history], env);
    expect(imported.exitCode, imported.all).toBe(0);
    expect(imported.stdout).toMatch(/5 record\(s\) and 15 metric value\(s\) appended, 0 already there/);
    expect((await cli(['import', history], env)).stdout).toMatch(/0 record\(s\) and 0 metric value\(s\) appended, 5 already there/);

    // A results file that is not in the history yet is checked against it.
    const fromFile = await cli(['regressions', candidate], env);
    expect(fromFile.exitCode, fromFile.all).toBe(1);
    expect(fromFile.stdout).toMatch(/^REGRESSION {2}disagg_perf_model_1k1k_ccb-UCX SERVER_MEDIAN_TTFT\[concurrency=8\]: value=30\.0000 baseline=20\.0000 threshold=5\.00% diff=-50\.00%/m);
    expect(fromFile.stdout).not.toMatch(/REGRESSION .*THROUGHPUT/);
    expect(fromFile.stdout).toMatch(/2 metric\(s\) compared .*, 1 regression\(s\)/);
    // Its own thresholds: 60 % lets it pass.
    expect((await cli(['regressions', candidate], { ...env, DISAGG_REGRESSION_THRESHOLD: '60' })).exitCode).toBe(0);

    // Once imported it is the latest run, checked by default, its own values not its history.
    await cli(['import', candidate], env);
    const latestRun = await cli(['regressions', '--all'], env);
    expect(latestRun.exitCode).toBe(1);
    // P95 of the smoothed daily means of the history before it [1000 x5]: 1000, the judged 1200 not part of it
    expect(latestRun.stdout).toMatch(/^ok {2}.*SERVER_OUTPUT_TOKEN_THROUGHPUT\[concurrency=8\]: value=1200\.0000 baseline=1000\.0000 .* diff=\+20\.00%/m);
    const asJson = JSON.parse((await cli(['regressions', '--json'], env)).stdout);
    expect(asJson).toMatchObject({ regressions: 1, compared: 2, findings: expect.arrayContaining([expect.objectContaining({ metric: 'SERVER_MEDIAN_TTFT', regression: true, gated: true })]) });
    // only the headline metrics gate by default: a disagg perf test's include its median TTFT per
    // concurrency, so the TTFT regression fails; gating the throughput alone, or all but TTFT, does not
    expect((await cli(['regressions'], { DISAGG_GATE_RULE: 'upstream', DISAGG_HISTORY: db })).exitCode).toBe(1);
    expect((await cli(['regressions'], { DISAGG_GATE_RULE: 'upstream', DISAGG_HISTORY: db, DISAGG_GATE_METRICS: 'SERVER_OUTPUT_TOKEN_THROUGHPUT' })).exitCode).toBe(0);
    expect((await cli(['regressions'], { DISAGG_GATE_RULE: 'upstream', DISAGG_HISTORY: db, DISAGG_GATE_METRICS: 'all,-SERVER_MEDIAN_TTFT' })).exitCode).toBe(0);
    // An earlier run has only the days before it: day 4 against days 0-3, no regression.
    expect((await cli(['regressions', '--run', 'day4'], env)).exitCode).toBe(0);
    const first = await cli(['regressions', '--run', 'day0'], env);
    expect(first.stdout).toMatch(/0 metric\(s\) compared .* 1 test\(s\) without earlier post-merge history/);

    const show = await cli(['show', 'disagg_perf_model_1k1k_ccb-UCX', '--metric', 'SERVER_MEDIAN_TTFT'], env);
    expect(show.exitCode).toBe(0);
    expect(show.stdout.split('\n').filter((l) => /^ {2}2026-11-/.test(l))).toHaveLength(6);
    expect(show.stdout).toMatch(/candidate \(latest\)\s+30$/m);
    expect((await cli(['show', 'no_such_test'], env)).exitCode).toBe(3);

    const runs = await cli(['runs'], env);
    expect(runs.stdout).toMatch(/6 run\(s\)/);
    expect(runs.stdout).toMatch(/ H100 .* latest {2}label=candidate/);
    const runsJson = JSON.parse((await cli(['runs', '--json'], env)).stdout);
    const extra = await cli(['runs', 'extra-arg'], env);
    expect(extra.exitCode).toBe(2);
    expect(extra.stderr).toMatch(/unexpected argument extra-arg: history runs takes none/);
    expect(runsJson).toHaveLength(6);
    expect(runsJson[5]).toMatchObject({ runId: 'latest', label: 'candidate', kind: 'post-merge', gpuTypes: 'H100', tests: 1 });
    const showJson = JSON.parse((await cli(['show', 'disagg_perf_model_1k1k_ccb-UCX', '--metric', 'SERVER_MEDIAN_TTFT', '--json'], env)).stdout);
    expect(showJson.map((p: { value: number }) => p.value)).toEqual([20, 20, 20, 20, 20, 30]);
    expect(showJson[0]).toMatchObject({ gpuType: 'H100', runKind: 'post-merge' });
    expect(show.stdout).toMatch(/SERVER_MEDIAN_TTFT concurrency=8 on H100 \(ms, lower is better\)/);
    // compare without -o: the CSV on standard output, no file in the current folder
    const toStdout = await cli(['compare', 'day4', 'candidate'], env);
    expect(toStdout.exitCode, toStdout.all).toBe(0);
    expect(toStdout.stdout.split('\n')[0]).toBe(',,day4,,,candidate (latest),,,delta_pct,,');
    expect(existsSync(path.join(scratch, 'kv_perf_comparison.csv'))).toBe(false);
    // a closed pipe ends the output quietly: `history export | head -1`
    const piped = await execa('bash', ['-c', `node ${path.join(root, 'bin/disagg-bench.js')} history export --format opensearch | head -c 10`], { cwd: scratch, env: { OUTPUT_PATH: path.join(scratch, 'out'), ...env }, reject: false });
    expect(piped.stderr).not.toMatch(/EPIPE|Error/);
    expect(piped.stdout).toHaveLength(10);

    const out = path.join(scratch, 'comparison.csv');
    const compared = await cli(['compare', 'day4', 'candidate', '-o', out], env);
    expect(compared.exitCode, compared.all).toBe(0);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe(',,day4,,,candidate (latest),,,delta_pct,,');
    expect(lines[1]).toBe('test,labels,SERVER_MEDIAN_TTFT,SERVER_OUTPUT_TOKEN_THROUGHPUT,SERVER_TOTAL_INPUT_TOKENS,SERVER_MEDIAN_TTFT,SERVER_OUTPUT_TOKEN_THROUGHPUT,SERVER_TOTAL_INPUT_TOKENS,SERVER_MEDIAN_TTFT,SERVER_OUTPUT_TOKEN_THROUGHPUT,SERVER_TOTAL_INPUT_TOKENS');
    expect(lines[2]).toBe('disagg_perf_model_1k1k_ccb-UCX,concurrency=8,20.0000,1000.0000,4096.0000,30.0000,1200.0000,4096.0000,50.00,20.00,0.00');
    // two results files need no store; upstream's --run0/--run1 flags work too
    const files = await cli(['compare', '--run0', history, '--run1', candidate, '-o', out], { DISAGG_HISTORY: path.join(scratch, 'none.duckdb') });
    expect(files.exitCode, files.all).toBe(0);
  });

  it('imports perf_script_test_results.csv in upstream\'s naming and this project\'s, with its own dates', async () => {
    expect(parseRowName('test_benchmark[disagg_perf_a_ccb-NIXL]_con:16')).toEqual({ testId: 'disagg_perf_a_ccb-NIXL', labels: { concurrency: 16 } });
    expect(parseRowName('disagg_perf_a_ccb-NIXL_con:16')).toEqual({ testId: 'disagg_perf_a_ccb-NIXL', labels: { concurrency: 16 } });
    expect(parseRowName('disagg_accuracy_b_dataset:gsm8k_filter:strict-match_metric:exact_match_run:1')).toEqual({
      testId: 'disagg_accuracy_b',
      labels: { dataset: 'gsm8k', filter: 'strict-match', metric: 'exact_match', run: 1 },
    });
    const day = (d: number) => ({ start: new Date(DAY0 + d * DAY_MS), end: new Date(DAY0 + d * DAY_MS + 60_000), durationSec: 60 });
    const metrics = (ttft: number) => [
      { name: 'SERVER_MEDIAN_TTFT', value: ttft, unit: 'ms', higherIsBetter: false, labels: { concurrency: 4 } },
      { name: 'SERVER_MEDIAN_E2EL', value: ttft * 10, unit: 'ms', higherIsBetter: false, labels: { concurrency: 4 } },
    ];
    const rows = [
      ...perfRowsFor({ name: 'test_benchmark[disagg_perf_m_ccb-NIXL]' }, metrics(30), day(1)),
      ...perfRowsFor({ name: 'disagg_perf_m_ccb-NIXL' }, metrics(32), day(2)),
      ...perfRowsFor({ name: 'test_benchmark[disagg_perf_m_ccb-UCX]' }, metrics(25), day(2)),
    ];
    const csv = path.join(scratch, 'perf_script_test_results.csv');
    writeFileSync(csv, stringify([[...PERF_CSV_COLUMNS], ...rows.map((r) => PERF_CSV_COLUMNS.map((c) => r[c]))]));
    const env = { DISAGG_HISTORY: path.join(scratch, 'h2.duckdb') };
    // upstream's CSV holds post-merge runs' figures: imported as such (the default is DISAGG_RUN_KIND, else local)
    const imported = await cli(['import', csv, '--gpu-type', 'GB200', '--label', 'upstream', '--kind', 'post-merge'], env);
    expect(imported.exitCode, imported.all).toBe(0);
    expect(imported.stdout).toMatch(/3 record\(s\) and 6 metric value\(s\) appended/);
    expect(imported.stdout).toMatch(/no config under .* for disagg_perf_m_ccb-NIXL, disagg_perf_m_ccb-UCX/);
    const show = await cli(['show', 'disagg_perf_m_ccb-NIXL', '--metric', 'SERVER_MEDIAN_TTFT'], env);
    expect(show.stdout).toMatch(/SERVER_MEDIAN_TTFT concurrency=4 on GB200 \(ms, lower is better\)/);
    expect(show.stdout).toMatch(/2026-11-02 00:01:00 {2}post-merge .* 30\n {2}2026-11-03 00:01:00 .* 32/);

    // compare-backends on the same CSV (upstream's input) and on the history's latest run
    const pairs = await cli(['compare-backends', '--csv-path', csv, '--html', path.join(scratch, 'backends.html')], env);
    expect(pairs.exitCode, pairs.all).toBe(1); // NIXL (first row: 30 ms) is 20 % slower than UCX (25 ms)
    expect(pairs.stdout).toMatch(/Comparison pairs: 2/);
    expect(pairs.stdout).toMatch(/^test_benchmark\[disagg_perf_m_ccb-NIXL\]_con:4,test_benchmark\[disagg_perf_m_ccb-UCX\]_con:4,SERVER_MEDIAN_TTFT,30,25,20,20,Fail$/m);
    expect(readFileSync(path.join(scratch, 'backends.html'), 'utf8')).toMatch(/<td class="fail">Fail<\/td>/);
    expect((await cli(['compare-backends', '--csv-path', csv, '--threshold', '25'], env)).exitCode).toBe(0);
    // --json: the same comparison as one object, nothing else on stdout; the same exit code
    const asJson = await cli(['compare-backends', '--csv-path', csv, '--json'], env);
    expect(asJson.exitCode).toBe(1);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ threshold: 5, defaultBackend: 'NIXL', failed: 2, pairs: expect.arrayContaining([expect.objectContaining({ metric: 'SERVER_MEDIAN_TTFT', status: 'Fail' })]) });
    // as upstream: with UCX as the default backend its rows are compared with themselves
    expect((await cli(['compare-backends', '--csv-path', csv, '--default-backend', 'UCX'], env)).exitCode).toBe(0);
    // the history as the source: the latest record of each test (NIXL 32 ms on day 2 against UCX 25 ms)
    const fromHistory = await cli(['compare-backends'], env);
    expect(fromHistory.exitCode).toBe(1);
    expect(fromHistory.stdout).toMatch(/^test_benchmark\[disagg_perf_m_ccb-NIXL\]_con:4,test_benchmark\[disagg_perf_m_ccb-UCX\]_con:4,SERVER_MEDIAN_TTFT,32,25,28[0-9.]*,28[0-9.]*,Fail$/m);
  });

  it('exports NDJSON in upstream\'s OpenSearch naming, with its _id', async () => {
    // _id: MD5 of Python's json.dumps(doc, sort_keys=True, indent=2), computed with Python for this document
    expect(documentId({ _id: 'x', b_is_valid: true, d_median_ttft: 20, l_concurrency: 8, s_gpu_type: 'h100', s_x: 'é' })).toBe('850a2dde1818eb3cbd059e807de312ff');
    const db = path.join(scratch, 'h3.duckdb');
    const r = record({ runId: 'exp', day: 1, ttft: 20 });
    r.run = { ...r.run!, commit: 'c0ffee', branch: 'main', ci: { BUILD_ID: '77', JOB_NAME: 'perf' }, identity: { benchmark_mode: 'e2e', gen_tp: 8, isl: 1024 }, thresholds: { SERVER_MEDIAN_TTFT: { postMerge: 0.03, preMerge: 0.06 } } };
    await cli(['import', resultsFile('exp.json', [r])], { DISAGG_HISTORY: db });
    const out = path.join(scratch, 'h.ndjson');
    const exported = await cli(['export', '--format', 'opensearch', '-o', out], { DISAGG_HISTORY: db });
    expect(exported.exitCode, exported.all).toBe(0);
    const [line] = readFileSync(out, 'utf8').trimEnd().split('\n');
    const doc = JSON.parse(line);
    expect(doc).toMatchObject({
      s_gpu_type: 'h100',
      s_runtime: 'multi_node_disagg_server',
      s_benchmark_mode: 'e2e',
      l_gen_tp: 8,
      l_isl: 1024,
      l_concurrency: 8,
      d_median_ttft: 20,
      d_token_throughput: 1000,
      d_threshold_post_merge_median_ttft: 0.03,
      d_threshold_pre_merge_median_ttft: 0.06,
      d_threshold_post_merge_token_throughput: 0.05,
      d_baseline_median_ttft: -1,
      b_is_post_merge: true,
      b_is_valid: true,
      s_commit: 'c0ffee',
      s_build_id: '77',
      s_job_name: 'perf',
      ts_created: DAY0 + DAY_MS + 10 * 3_600_000 + 1_800_000,
    });
    // every key has a type prefix upstream's typeCheckForOpenSearchDB accepts; d_ values are floats in the text
    for (const key of Object.keys(doc)) expect(key).toMatch(/^(s_|l_|d_|b_|ts_|_id$|@timestamp$)/);
    expect(line).toMatch(/"d_median_ttft": 20\.0/);
    expect(line).toMatch(/"l_concurrency": 8[,}]/);
    expect(doc._id).toBe(documentId(doc));
    const bulk = await cli(['export', '--format', 'opensearch', '--bulk', 'perf-index'], { DISAGG_HISTORY: db });
    const [action, source] = bulk.stdout.split('\n');
    expect(JSON.parse(action)).toEqual({ index: { _index: 'perf-index', _id: doc._id } });
    expect(JSON.parse(source)._id).toBeUndefined();
    expect((await cli(['export', '--format', 'csv'], { DISAGG_HISTORY: db })).exitCode).toBe(2);
  });

  it('the remaining options: --kind, --label0/--label1, --output, --csv, export --run', { timeout: 300_000 }, async () => {
    const db = path.join(scratch, 'h5.duckdb');
    const env = { DISAGG_GATE_RULE: 'upstream', DISAGG_HISTORY: db, DISAGG_GATE_METRICS: 'all' };
    await cli(['import', resultsFile('base.json', [0, 1, 2].map((d) => record({ runId: `b${d}`, day: d })))], env);
    const file = resultsFile('slower.json', [record({ runId: 'x', day: 4, ttft: 21.5 })]); // 7.5 % slower than 20 ms
    // judged as post-merge (5 %) it regressed, as pre-merge (10 %) it did not
    expect((await cli(['regressions', file], env)).exitCode).toBe(1);
    expect((await cli(['regressions', file, '--kind', 'pre-merge'], env)).exitCode).toBe(0);
    // imported as pre-merge: kept, never history for later baselines
    const noRun = record({ runId: 'y', day: 5 });
    delete noRun.run; // as written by an older version
    expect((await cli(['import', resultsFile('norun.json', [noRun]), '--kind', 'pre-merge'], env)).stdout).toMatch(/1 record\(s\)/);
    expect((await cli(['runs'], env)).stdout).toMatch(/pre-merge .* import-[0-9a-f]{16} {2}\(import /);
    const out = path.join(scratch, 'labelled.csv');
    await cli(['compare', 'b0', 'b2', '-o', out, '--label0', 'before', '--label1', 'after'], env);
    expect(readFileSync(out, 'utf8').split('\n')[0]).toBe(',,before,,,after,,,delta_pct,,');
    const pairsCsv = path.join(scratch, 'pairs.csv');
    const rows = [
      ...perfRowsFor({ name: 'test_benchmark[disagg_perf_q_ccb-DEFAULT]' }, [{ name: 'SERVER_OUTPUT_TOKEN_THROUGHPUT', value: 900, unit: 'tok/s', higherIsBetter: true, labels: { concurrency: 1 } }], { start: new Date(DAY0), end: new Date(DAY0 + 1000), durationSec: 1 }),
      ...perfRowsFor({ name: 'test_benchmark[disagg_perf_q_ccb-UCX]' }, [{ name: 'SERVER_OUTPUT_TOKEN_THROUGHPUT', value: 1000, unit: 'tok/s', higherIsBetter: true, labels: { concurrency: 1 } }], { start: new Date(DAY0), end: new Date(DAY0 + 1000), durationSec: 1 }),
    ];
    const csv = path.join(scratch, 'throughput.csv');
    writeFileSync(csv, stringify([[...PERF_CSV_COLUMNS], ...rows.map((r) => PERF_CSV_COLUMNS.map((c) => r[c]))]));
    // throughput is higher-is-better: DEFAULT (= NIXL) 10 % below UCX is slower, a Fail
    const r = await cli(['compare-backends', '--csv', csv, '--output', pairsCsv], env);
    expect(r.exitCode).toBe(1);
    expect(readFileSync(pairsCsv, 'utf8')).toMatch(/^test_case_name_default,test_case_name_ucx,metric_type,default_value,ucx_value,diff_pct,regression_pct,status\ntest_benchmark\[disagg_perf_q_ccb-DEFAULT\]_con:1,.*,900,1000,10,10,Fail/);
    const one = await cli(['export', '--format', 'opensearch', '--run', 'b1'], env);
    expect(one.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(one.stdout).s_run_id).toBe('b1');
    expect((await cli(['export', '--format', 'opensearch', '--run', 'nope'], env)).stderr).toMatch(/no run with the id or label nope/);
  });

  it("compares two slurm_logs folders exactly as compare_kv_perf_runs.py does", async () => {
    const logs = (name: string, tests: Record<string, Record<number, Record<string, number> | string>>) => {
      const dir = path.join(scratch, name);
      for (const [test, byConcurrency] of Object.entries(tests)) {
        for (const [c, result] of Object.entries(byConcurrency)) {
          const folder = path.join(dir, test, `concurrency_${c}`);
          mkdirSync(folder, { recursive: true });
          writeFileSync(path.join(folder, 'result.json'), typeof result === 'string' ? result : JSON.stringify(result));
        }
      }
      return dir;
    };
    const r = (ttft: number, tput: number) => ({ median_ttft_ms: ttft, median_tpot_ms: 5, median_itl_ms: 5, median_e2el_ms: 900, output_throughput: tput, request_throughput: 2 });
    const run0 = logs('logs0', { 'disagg_perf_m_1k1k-cpp': { 8: r(100, 1000) }, 'disagg_perf_m_1k1k-python': { 8: r(120, 900) }, 'disagg_perf_other': { 8: r(1, 1) }, 'disagg_perf_x-cpp_ERROR': { 8: r(1, 1) } });
    const run1 = logs('logs1', { 'disagg_perf_m_1k1k-cpp': { 8: r(110, 1100), 16: 'not json' } });
    const out = path.join(scratch, 'kv.csv');
    const result = await cli(['compare', '--run0', run0, '--run1', run1, '--label0', 'base', '-o', out]);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toBe('Run0 (base): 2 entries\nRun1 (run1): 2 entries\nTotal unique (config, concurrency) pairs: 2\n\nWritten 2 rows to ' + out);
    expect(result.stderr).toMatch(/^ {2}WARNING: failed to read .*logs1\/disagg_perf_m_1k1k-cpp\/concurrency_16\/result\.json: /m);
    const six = ',,,,,';
    expect(readFileSync(out, 'utf8').split('\r\n')).toEqual([
      `,,cpp_base${six},cpp_run1${six},cpp_delta_pct${six},python_base${six},python_run1${six},python_delta_pct${six}`,
      'config,concurrency,' + Array(6).fill('ttft,tpot,itl,e2el,output_tput,request_tput').join(','),
      'm_1k1k,8,100.0000,5.0000,5.0000,900.0000,1000.0000,2.0000,110.0000,5.0000,5.0000,900.0000,1100.0000,2.0000,10.00,0.00,0.00,0.00,10.00,0.00,' +
        '120.0000,5.0000,5.0000,900.0000,900.0000,2.0000,,,,,,,,,,,,',
      'm_1k1k,16,' + ',,,,,,'.repeat(6).slice(0, -1),
      '',
    ]);
  });

  it('bad input: one line naming the file or store and what to do', async () => {
    const notCsv = path.join(scratch, 'bad.csv');
    writeFileSync(notCsv, 'a,b\n1,2\n');
    const r1 = await cli(['import', notCsv], { DISAGG_HISTORY: path.join(scratch, 'h4.duckdb') });
    expect(r1.exitCode).toBe(3);
    expect(r1.stderr.trim()).toBe(`disagg-bench history import: ${notCsv}: not a perf_script_test_results.csv (its header lacks network_name, perf_metric, start_timestamp, end_timestamp, metric_type; expected the columns ${PERF_CSV_COLUMNS.join(',')})`);
    const badRow = path.join(scratch, 'bad-row.csv');
    writeFileSync(badRow, `${PERF_CSV_COLUMNS.join(',')}\nx_con:1,,,,,,,,not-a-number,1,2026-11-01 00:00:00,2026-11-01 00:01:00,valid,cmd,,,M\n`);
    expect((await cli(['import', badRow], { DISAGG_HISTORY: path.join(scratch, 'h4.duckdb') })).stderr).toMatch(/bad-row\.csv:2: expected a row name, a numeric perf_metric/);
    const badJson = path.join(scratch, 'bad.json');
    writeFileSync(badJson, '{"version": 1, "records": [{"testId": 3}]}');
    expect((await cli(['import', badJson], { DISAGG_HISTORY: path.join(scratch, 'h4.duckdb') })).stderr).toMatch(/bad\.json: records\[0\] testId is 3, expected a string/);
    const corrupt = path.join(scratch, 'corrupt.duckdb');
    writeFileSync(corrupt, 'garbage'.repeat(1000));
    const r2 = await cli(['runs'], { DISAGG_HISTORY: corrupt });
    expect(r2.exitCode).toBe(3);
    expect(r2.stderr).toMatch(/^disagg-bench history runs: the DuckDB history .*corrupt\.duckdb: the file is not a DuckDB database this version can read .*; move .* aside/);
    const r3 = await cli(['runs'], { DISAGG_HISTORY: 'postgres://nobody@127.0.0.1:1/x', DISAGG_HISTORY_CONNECT_TIMEOUT_SEC: '3' });
    expect(r3.stderr).toMatch(/^disagg-bench history runs: the PostgreSQL history postgres:\/\/nobody@127\.0\.0\.1:1\/x: no server answers there/);
    expect(r3.exitCode).toBe(3);
    const r4 = await cli(['runs'], { DISAGG_HISTORY: 'off' });
    expect(r4.stderr).toMatch(/no history store is configured/);
    expect(r4.exitCode).toBe(3);
    const r5 = await cli(['runs'], { DISAGG_HISTORY: 'mysql://x' });
    expect(r5.exitCode).toBe(2); // a bad setting, as for every command
    expect(r5.stderr).toMatch(/DISAGG_HISTORY="mysql:\/\/x": expected off, a postgres:\/\/user@host:port\/database URL or a file path/);
  });

  // Its runs are in tests/history/bisect.test.ts; here each option's refusal, before anything runs.
  it('bisect: each option refused in one line, exit 2', { timeout: 300_000 }, async () => {
    const ends = ['disagg_perf_x', '--metric', 'SERVER_MEDIAN_TTFT', '--good', 'no-such-ref:20,21', '--bad', 'nor-this-one:30'];
    const cases: [string[], RegExp][] = [
      [[...ends, '--repeat', '0'], /--repeat "0": expected a whole number of runs >= 1/],
      [[...ends, '--max-step-runs', 'x'], /--max-step-runs "x": expected a whole number of runs >= 1/],
      [[...ends, '--max-runs', '0'], /--max-runs "0": expected a whole number of runs >= 1/],
      [[...ends, '--refs', 'a,b', '--images', 'c,d'], /--refs and --images are two ways to list the candidates: give one/],
      [[...ends, '--scheduler', 'bogus'], new RegExp(`--scheduler "bogus": ${schedulerNameProblem('bogus')}`)],
      [[...ends, '--threshold', 'abc'], /--threshold "abc": expected a percentage >= 0/],
      [[...ends.slice(0, 5), '--bad', 'no-such-ref:20,21'], /--good and --bad are both 'no-such-ref:20,21'/],
      [['disagg_perf_x', '--metric', 'A[b]', '--good', 'a:1', '--bad', 'b:2'], /--metric "A\[b\]": label 'b' is not label=value/],
      // WORK_DIR of this file is the repository: its commits exist, these refs do not.
      [[...ends, '--output', path.join(scratch, 'steps'), '--json'], /--good: 'no-such-ref' names no commit of /],
    ];
    for (const [args, says] of cases) {
      const r = await cli(['bisect', ...args], { DISAGG_HISTORY: path.join(scratch, 'bisect.duckdb') });
      expect(r.exitCode, r.all).toBe(2);
      expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(says);
    }
  });
});
