// Bad input, end to end: a real run (`vitest run --project disagg`, local scheduler) over a
// WORK_DIR full of broken configs next to one good config. No crash, no hang: each broken config
// is one failing test whose error names the file and the place (file:line:col, the key path), the
// good config passes, and nothing broken is ever submitted; files saved by Windows editors (BOM,
// CRLF) run, UTF-16 and files that cannot be read fail with the reason. Every test has its
// results.json record: a broken config's is `failed` with its located issues, a
// config for another GPU's is `skipped` with the reason, neither with a job; RESUME=1 takes no
// skip for a result and duplicates none. Also a test list naming unknown ids,
// an OUTPUT_PATH that cannot be written, and matrix files that are not matrices.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMatrix, readMatrix } from '../../runners/xfer/matrix.ts';
import { recordOf, runSuite, standinConfig, testIdOf, writeWorkDir, removeWorkDirs } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

interface JsonReport {
  testResults: Array<{ assertionResults: Array<{ title: string; status: string; failureMessages: string[] }> }>;
}

/** Each test's status and first failure line, from Vitest's JSON report. */
function outcomes(reportFile: string): Map<string, { status: string; message: string }> {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport;
  return new Map(report.testResults.flatMap((file) =>
    file.assertionResults.map((t) => [t.title, { status: t.status, message: t.failureMessages.join('\n') }] as const)));
}

const goodYaml = async () => stringify(await standinConfig({ client: 'ok' }));

describe.concurrent('bad input, end to end', () => {
  it('broken configs each fail with one located error; the good one passes; nothing broken is submitted', { timeout: 300_000 }, async () => {
    const good = await goodYaml();
    const { workDir, outputPath } = writeWorkDir({
      fine: good,
      tabs: good.replace(/^ {2}model_name:/m, '\tmodel_name:'),
      duplicate_keys: good.replace(/^slurm:\n/m, 'slurm:\n  partition: debug\n'),
      unclosed_quote: good.replace(/^ {2}model_name: .*$/m, '  model_name: "standin'),
      wrong_types: good.replace(/^ {2}gpus_per_node: 1$/m, '  gpus_per_node: four').replace(/^ {2}concurrency_list: .*$/m, '  concurrency_list: {a: 1}'),
      missing_sections: 'metadata:\n  model_name: standin\n  precision: fp4\n  supported_gpus: [GB200]\n',
      'bogus/perf/unknown_type': good,
      other_gpu: good.replace(/^ {2}supported_gpus:\n {4}- GB200$/m, '  supported_gpus:\n    - GB300'),
    }, 'bad-input-');
    const configFile = (name: string) => path.join(workDir, 'test_configs/disagg/perf', `${name}.yaml`);
    // Binary garbage, as a file copied over by mistake would be.
    writeFileSync(configFile('binary'), Buffer.from([0x6d, 0x65, 0x74, 0x61, 0x3a, 0x0a, 0x20, 0x20, 0x00, 0xff, 0xfe, 0x13, 0x37]));
    // Saved by Windows editors: a byte-order mark, CRLF line ends (both fine), or UTF-16 (refused).
    writeFileSync(configFile('bom'), `\uFEFF${await goodYaml()}`);
    writeFileSync(configFile('crlf'), (await goodYaml()).replace(/\n/g, '\r\n'));
    writeFileSync(configFile('utf16'), Buffer.from(`\uFEFF${good}`, 'utf16le'));
    // Not readable at all (as root, only a link to nothing is), and a FIFO that would block a reader forever.
    symlinkSync(path.join(workDir, 'no-such-file.yaml'), configFile('dangling'));
    execFileSync('mkfifo', [configFile('fifo')]);
    // A recursive anchor (in metadata, and in the verbatim worker_config), two symlink
    // loops (a link named like a config, and one below the category back up to the type).
    writeFileSync(configFile('recursive'), good.replace(/^metadata:\n/m, 'metadata: &m\n  self: *m\n'));
    writeFileSync(configFile('worker_recursive'), good.replace(/^ {2}gen:\n/m, '  gen:\n    moe_config: &mc {backend: TRTLLM, loop: *mc}\n'));
    symlinkSync('.', configFile('loop'));
    mkdirSync(path.join(workDir, 'test_configs/disagg/perf/sub'));
    symlinkSync('../..', path.join(workDir, 'test_configs/disagg/perf/sub/up'));
    const report = path.join(outputPath, '..', 'report.json');
    const { records, ledger, output, exitCode } = await runSuite({
      workDir, outputPath, scheduler: 'local', args: ['--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
    });
    expect(exitCode, output).toBe(1);
    const tests = outcomes(report);
    const failure = (name: string) => {
      const t = tests.get(testIdOf(name));
      expect(t, `${name}: ${output}`).toBeDefined();
      expect(t!.status).toBe('failed');
      return t!.message.split('\n')[0];
    };
    const file = (name: string) => `test_configs/disagg/perf/${name}.yaml`;
    for (const name of ['fine', 'bom', 'crlf']) expect(tests.get(testIdOf(name))?.status, `${name}: ${output}`).toBe('passed');
    expect(failure('utf16')).toBe(`ConfigError: ${file('utf16')}:1:1 UTF-16 text (byte-order mark FF FE); save the file as UTF-8`);
    expect(failure('dangling')).toBe(`ConfigError: ${file('dangling')}:1:1 cannot be read: no such file (a link to nothing?) (ENOENT)`);
    expect(failure('fifo')).toBe(`ConfigError: ${file('fifo')}:1:1 not a regular file (a FIFO); expected a YAML text file`);
    expect(failure('tabs')).toMatch(new RegExp(`^ConfigError: ${file('tabs')}:\\d+:\\d+ .*[Tt]ab`));
    expect(failure('duplicate_keys')).toMatch(new RegExp(`^ConfigError: ${file('duplicate_keys')}:\\d+:3 duplicate key 'partition' \\(first at line \\d+, column 3\\)`));
    // Where the quote opens (the model_name line), not where the text ends.
    const quoteLine = good.split('\n').findIndex((l) => /^ {2}model_name:/.test(l)) + 1;
    expect(failure('unclosed_quote')).toMatch(new RegExp(`^ConfigError: ${file('unclosed_quote')}:${quoteLine}:15 this " opens a quoted value that is never closed`));
    expect(failure('recursive')).toMatch(new RegExp(`^ConfigError: ${file('recursive')}:\\d+:\\d+ \\*m is inside the value it names \\(&m at line \\d+\\): a value cannot contain itself$`));
    expect(failure('worker_recursive')).toMatch(new RegExp(`^ConfigError: ${file('worker_recursive')}:\\d+:\\d+ \\*mc is inside the value it names`));
    expect(failure('loop')).toBe(`ConfigError: ${file('loop')}:1:1 not a regular file (a folder); expected a YAML text file`);
    expect(output.split('\n').filter((l) => l.includes('sub/up'))).toEqual(['test_configs/disagg/perf/sub/up: a link back to test_configs/disagg, which holds it (a loop); not followed']);
    expect(output).not.toMatch(/Converting circular structure|Maximum call stack/);
    // A config's failure shows its located issues, not a frame of the framework's code.
    expect(output).not.toMatch(/framework\/suite\/suite\.test\.ts:\d+/);
    expect(failure('binary')).toBe(`ConfigError: ${file('binary')}:2:3 not a YAML text file: control byte 0x00`);
    const wrong = tests.get(testIdOf('wrong_types'))!.message;
    expect(wrong).toMatch(new RegExp(`${file('wrong_types')}:\\d+:\\d+ hardware\\.gpus_per_node: expected integer, got string "four"`));
    expect(wrong).toMatch(new RegExp(`${file('wrong_types')}:\\d+:\\d+ benchmark\\.concurrency_list: .*got a mapping`));
    const missing = tests.get(testIdOf('missing_sections'))!.message;
    for (const section of ['slurm', 'benchmark', 'hardware', 'environment', 'worker_config']) {
      expect(missing).toContain(`${file('missing_sections')}:1:1 ${section}: is required but missing`);
    }
    expect(tests.get('test_configs/bogus/perf/unknown_type.yaml')?.message).toMatch(
      /^ConfigError: test_configs\/bogus\/perf\/unknown_type\.yaml unknown test type 'bogus' \(known: disagg, wideep\b[^)]*\)/,
    );
    // Only the good configs became jobs; every broken one has its record without a job: failed,
    // with the issues its test failed with; the one for another GPU is skipped, with the reason.
    const good3 = ['bom', 'crlf', 'fine'].map((n) => testIdOf(n));
    expect([...new Set(ledger.map((e) => e.test))].sort()).toEqual(good3);
    expect(records.filter((r) => r.jobId !== null).map((r) => r.testId).sort()).toEqual(good3);
    const configTests = [...tests.keys()].filter((id) => id.startsWith('disagg_'));
    expect(records.map((r) => r.testId).sort()).toEqual(configTests.sort());
    const broken = configTests.filter((id) => tests.get(id)!.status === 'failed');
    expect(broken.length).toBeGreaterThanOrEqual(12);
    for (const id of broken) {
      const record = recordOf(records, id)!;
      expect(record, id).toMatchObject({ jobId: null, verdict: 'failed', metrics: [] });
      expect(tests.get(id)!.message.startsWith(`ConfigError: ${record.failures.join('\n')}`), `${id}: ${record.failures.join(' | ')}`).toBe(true);
    }
    expect(tests.get(testIdOf('other_gpu'))?.status).toBe('skipped');
    expect(recordOf(records, testIdOf('other_gpu'))).toMatchObject({ jobId: null, verdict: 'skipped', failures: [], skipReason: 'GPU type GB200 is not in supported_gpus [GB300]' });

    // RESUME=1 on the same OUTPUT_PATH: the results stand (nothing submitted again), each test
    // keeps one record, the skip is written again in place.
    const resumed = await runSuite({ workDir, outputPath, scheduler: 'local', env: { RESUME: '1' } });
    expect(resumed.ledger, resumed.output).toEqual(ledger);
    expect(resumed.records.map((r) => r.testId).sort()).toEqual(configTests.sort());
    for (const id of good3) expect(recordOf(resumed.records, id)).toEqual(recordOf(records, id));
    const skip = recordOf(resumed.records, testIdOf('other_gpu'))!;
    expect(skip).toMatchObject({ verdict: 'skipped', jobId: null });
    expect(skip.timing.end >= recordOf(records, testIdOf('other_gpu'))!.timing.end).toBe(true);
  });

  it('a test list naming unknown ids: one failing test lists them with their lines; the known ones run', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ fine: await goodYaml() }, 'bad-list-');
    mkdirSync(path.join(workDir, 'testlist'));
    writeFileSync(path.join(workDir, 'testlist/run.txt'), `# nightly\n${testIdOf('fine')}\ndisagg_perf_no_such_config\n\ndisagg_perf_typo\n`);
    const { records, output, exitCode } = await runSuite({ workDir, outputPath, scheduler: 'local', env: { DISAGG_TEST_LIST: 'testlist/run.txt' } });
    expect(exitCode, output).toBe(1);
    expect(output).toMatch(/these 2 ids match no config:\n\s+testlist\/run\.txt:3 disagg_perf_no_such_config\n\s+testlist\/run\.txt:5 disagg_perf_typo/);
    expect(recordOf(records, testIdOf('fine'))).toMatchObject({ verdict: 'passed' });
  });

  it('under --project nixl, listed ids that miss and configs of no test type still fail the run (not "no configs")', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ fine: await goodYaml(), 'bogus/perf/x': await goodYaml() }, 'bad-list-nixl-');
    mkdirSync(path.join(workDir, 'testlist'));
    writeFileSync(path.join(workDir, 'testlist/run.txt'), 'nxil_perf_ct_seed_write_shm\nct_seed_write_shm\n../../etc/passwd\n');
    const { output, exitCode, ledger } = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { DISAGG_TEST_LIST: 'testlist/run.txt' } });
    expect(exitCode, output).toBe(1);
    expect(output).toMatch(/these 3 ids match no config:\n\s+testlist\/run\.txt:1 nxil_perf_ct_seed_write_shm\n\s+testlist\/run\.txt:2 ct_seed_write_shm\n\s+testlist\/run\.txt:3 \.\.\/\.\.\/etc\/passwd\n/); // a bare entry is the id as written
    expect(output).not.toMatch(/no configs under test_configs\/nixl/);
    expect(ledger).toEqual([]);

    // Without a test list: the config of no test type fails the nixl run too, and the disagg config is no concern of it.
    const plain = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl' });
    expect(plain.exitCode, plain.output).toBe(1);
    expect(plain.output).toMatch(/test_configs\/bogus\/perf\/x\.yaml unknown test type 'bogus'/);
  });

  it('a test list that selects configs of another project only: said in one line, and the skip says why', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ fine: await goodYaml() }, 'list-other-project-');
    mkdirSync(path.join(workDir, 'testlist'));
    writeFileSync(path.join(workDir, 'testlist/run.txt'), `${testIdOf('fine')}\n`);
    const { output, exitCode } = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { DISAGG_TEST_LIST: 'testlist/run.txt' }, args: ['--reporter=verbose'] });
    expect(exitCode, output).toBe(0);
    expect(output).toContain('test list testlist/run.txt: 1 disagg test(s) it names are not run by this invocation (run them with --project disagg)');
    expect(output).toContain('the test list testlist/run.txt selects no config under test_configs/nixl/');
  });

  it('an OUTPUT_PATH that cannot be written stops the run at once with one error naming what is in the way', { timeout: 120_000 }, async () => {
    const { workDir } = writeWorkDir({ fine: await goodYaml() }, 'bad-output-');
    const blocker = path.join(mkdtempSync(path.join(tmpdir(), 'bad-output-')), 'a-file');
    writeFileSync(blocker, 'not a folder\n');
    const outputPath = path.join(blocker, 'results');
    const { output, exitCode } = await runSuite({ workDir, outputPath, scheduler: 'local' });
    expect(exitCode).toBe(2);
    const error = `disagg-bench: error: OUTPUT_PATH=${outputPath} cannot be written: ${blocker} is a file, not a folder.`;
    expect(output).toContain(error);
    expect(output.split(error)).toHaveLength(2); // said once
    expect(output).not.toMatch(/Unhandled Error|❯|\bat .*\.ts:\d+/); // no stack, no code frame
    expect(readFileSync(blocker, 'utf8')).toBe('not a folder\n');
  });
});

describe('transfer matrix files that are not matrices', () => {
  it('binary garbage, bad tokens and the wrong size are errors that name file, line and column', () => {
    expect(() => parseMatrix('0 1K\n\u0000\u00ff 2\n', 'garbage.txt')).toThrow(/^garbage\.txt:2:1 '\u0000\u00ff' is not a size/);
    expect(() => parseMatrix('0 1K\n1K NaN\n', 'nan.txt')).toThrow(/^nan\.txt:2:4 'NaN' is not a size/);
    expect(() => parseMatrix('0 1K 2K\n1K 0 3K\n', 'short.txt', 2)).toThrow(/short\.txt/);
    const dir = mkdtempSync(path.join(tmpdir(), 'matrix-'));
    writeFileSync(path.join(dir, 'm.bin'), Buffer.from([0x00, 0x01, 0xff, 0x0a]));
    expect(() => readMatrix(path.join(dir, 'm.bin'), 2)).toThrow(/m\.bin:1:1 /);
  });
});
