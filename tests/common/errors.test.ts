// The one error hierarchy (runners/common/errors.ts): every error class of the framework and the
// runners extends DisaggBenchError (the engine's through XferError), and each outside the engine
// renders the file, place and expectation it carries. The classes are found in the source, so a new
// one without a row here fails; each row builds its error the way the code raising it does.
// tests/common/throw-sites.test.ts checks what is thrown.
import { GitError } from '../../framework/history/bisect/revisions.ts';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DisaggBenchError, EnvironmentError, FailureError, InputError, InternalError, withPlace, type ErrorPlace } from '../../runners/common/errors.ts';
import { TransferError } from '../../runners/xfer/errors.ts';
import { SettingsError } from '../../framework/settings.ts';
import { RunInterruptedError } from '../../framework/jobs/job-manager.ts';
import { RunRefError } from '../../framework/history/run-ref.ts';
import { SqlError } from '../../framework/history/sql-connection.ts';
import { UpstreamCsvError } from '../../framework/history/upstream-csv.ts';
import { HistoryStoreError } from '../../framework/history/errors.ts';
import { ConfigError } from '../../framework/config/issue.ts';
import { TestListError } from '../../framework/select/testlist.ts';
import { SchedulerError } from '../../framework/scheduler/scheduler.ts';
import { GgufError } from '../../runners/llamacpp/gguf/gguf-check.ts';
import { LlamaError } from '../../runners/llamacpp/native/llama.ts';
import { BadRequest } from '../../runners/llamacpp/openai-protocol.ts';
import { OutputPathError } from '../../framework/suite/output-path-error.ts';
import { ResultsInputError } from '../../framework/results/report/load.ts';
import { CsvHeaderMismatchError } from '../../framework/results/csv.ts';
import { FileLockError } from '../../framework/results/file-lock.ts';
import { ResultsFileError } from '../../framework/results/json.ts';
import { ShellWordsError, splitShellWords } from '../../runners/common/shell.ts';
import { OutputWriteError } from '../../runners/common/append-whole.ts';
import { FileReadError } from '../../runners/common/read-file.ts';
import { UsageError } from '../../runners/common/errors.ts';
import { AllocationError } from '../../framework/types/serving/job/allocation.ts';
import { CommandTemplateError } from '../../framework/types/serving/job/command-template.ts';
import { UnresolvedPlaceholderError } from '../../framework/types/serving/job/job-builder.ts';
import { ConcurrencyListError } from '../../framework/types/serving/serving-config.ts';
import { RequestFailedError } from '../../runners/trtllm/serve-bench/failure.ts';
import { MalformedStreamError } from '../../runners/trtllm/serve-bench/sse-lines.ts';
import { EtcdError } from '../../runners/nixl/etcd.ts';
import { ProfileError } from '../../framework/run/profile.ts';
import { ImportFileError } from '../../framework/history/import.ts';

const root = path.resolve(import.meta.dirname, '../..');

/** Where error classes live. */
const FOLDERS = ['framework', 'runners'];
/** The engine's classes: under DisaggBenchError through XferError, with fields of their own (ranks, library, offset) rather than rows here. */
const ENGINE = 'runners/xfer/';

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** Every `class X extends Y` whose name or parent ends in Error. */
const declared = FOLDERS.flatMap(sourceFiles).flatMap((file) =>
  [...readFileSync(path.join(root, file), 'utf8').matchAll(/(\bexport\s+)?\bclass\s+(\w+)\s+extends\s+(\w+)/g)]
    .filter(([, , name, parent]) => name.endsWith('Error') || parent.endsWith('Error'))
    .map(([, exported, name, parent]) => ({ file, name, parent, exported: Boolean(exported) })),
);

type Row = [cls: abstract new (...args: never[]) => Error, make: () => Error, carries: ErrorPlace];

const carriesNothing: ErrorPlace = {};

/**
 * Each class, an error as its code raises it, and the file/place/expected it carries. Those that
 * carry none (carriesNothing): SqlError is a backend's failure, turned into a HistoryStoreError that
 * names the store; ConcurrencyListError
 * becomes a config issue located at benchmark.concurrency_list (the serving rules); AllocationError is
 * the job builder's safety net behind the rules that report the same problems at their keys;
 * RequestFailedError and MalformedStreamError end one request of serve-bench and are counted there;
 * BadRequest is a llama-server's HTTP 400 answer to one request.
 */
const ROWS: Row[] = [
  [GgufError, () => new GgufError('m.gguf is cut off: its tensors end at byte 99 but the file has 50', { file: 'm.gguf' }), { file: 'm.gguf' }],
  [LlamaError, () => new LlamaError('no libllama.so in /opt/llama', { expected: 'a llama.cpp build (LLAMA_CPP_LIB_DIR)' }), { expected: 'a llama.cpp build (LLAMA_CPP_LIB_DIR)' }],
  [BadRequest, () => new BadRequest('n: this engine returns one choice per request'), carriesNothing],
  [SettingsError, () => new SettingsError(['DISAGG_POLL_INTERVAL_SEC="x": expected a number of seconds > 0 (default 30)']), { place: 'DISAGG_POLL_INTERVAL_SEC' }],
  [RunInterruptedError, () => new RunInterruptedError('SIGTERM; disagg_perf_a was not submitted', 'disagg_perf_a'), { place: 'disagg_perf_a' }],
  [RunRefError, () => new RunRefError('no run 7; `disagg-bench history runs` lists the runs of history.duckdb', 'history.duckdb'), { place: 'history.duckdb' }],
  [SqlError, () => new SqlError(Object.assign(new Error('relation "runs" does not exist'), { code: '42P01' })), carriesNothing],
  [UpstreamCsvError, () => {
    try {
      throw new UpstreamCsvError("a.csv:3: expected a row name, a numeric perf_metric, a metric_type and timestamps 'YYYY-MM-DD HH:MM:SS'; found \"x\"", {
        file: 'a.csv', place: 'a.csv:3', expected: 'a row name, a numeric perf_metric, a metric_type and timestamps',
      });
    } catch (error) {
      return error as Error;
    }
  }, { file: 'a.csv', place: 'a.csv:3', expected: 'a row name, a numeric perf_metric, a metric_type and timestamps' }],
  [HistoryStoreError, () => new HistoryStoreError('postgres://h/db', 'cannot connect', 'check DISAGG_HISTORY'), { place: 'postgres://h/db' }],
  [ConfigError, () => new ConfigError([{ file: 'test_configs/disagg/perf/a.yaml', line: 4, col: 3, path: 'slurm.job_time', message: 'must match HH:MM:SS' }]),
    { file: 'test_configs/disagg/perf/a.yaml', place: '4:3 slurm.job_time' }],
  [TestListError, () => new TestListError('DISAGG_TEST_LIST="l.txt" (/w/l.txt) holds no test ids; expected one test id per line', '/w/l.txt'),
    { file: '/w/l.txt', place: 'DISAGG_TEST_LIST', expected: 'one test id per line' }],
  [SchedulerError, () => new SchedulerError('sbatch of job "t" failed: exit code 1\n  command: sbatch --parsable job.sh', 'sbatch --parsable job.sh', 1), { place: 'sbatch --parsable job.sh' }],
  [OutputPathError, () => new OutputPathError('OUTPUT_PATH=/out: /out/results.json is a folder; move it aside or point OUTPUT_PATH to another folder', '/out'),
    { file: '/out', place: 'OUTPUT_PATH' }],
  [ResultsInputError, () => new ResultsInputError('/r/results.json', 'no such file or folder'), { file: '/r/results.json' }],
  [CsvHeaderMismatchError, () => new CsvHeaderMismatchError('/out/perf.csv', 'network_name,perf_metric', 'a,b'), { file: '/out/perf.csv', place: 'its header', expected: 'network_name,perf_metric' }],
  [FileLockError, () => new FileLockError('/out/results.json', 'the lock was compromised'), { file: '/out/results.json' }],
  [ResultsFileError, () => new ResultsFileError('/out/results.json', 'is not JSON'), { file: '/out/results.json' }],
  [ShellWordsError, () => {
    try {
      splitShellWords("a 'b");
    } catch (error) {
      return error as Error;
    }
    throw new Error('splitShellWords accepted an unterminated quote');
  }, { place: JSON.stringify("a 'b") }],
  [OutputWriteError, () => new OutputWriteError('/out/perf.csv', 'ENOSPC', 'no space left on device'), { file: '/out/perf.csv' }],
  [FileReadError, () => new FileReadError('/w/l.txt', 'is not a regular file (a FIFO)', 'not-regular'), { file: '/w/l.txt' }],
  [UsageError, () => new UsageError('unknown option --colour', 'colour'), { place: 'colour' }],
  [UnresolvedPlaceholderError, () => new UnresolvedPlaceholderError([{ path: 'slurm.partition', value: '<partition>' }]), { place: 'slurm.partition' }],
  [AllocationError, () => new AllocationError('4 GPUs per server but 2 per node'), carriesNothing],
  [CommandTemplateError, () => new CommandTemplateError('benchmark.client_command: unknown placeholder {x} (known: {model})', 'benchmark.client_command'), { place: 'benchmark.client_command' }],
  [ConcurrencyListError, () => new ConcurrencyListError('"a" is not a whole number'), carriesNothing],
  [RequestFailedError, () => new RequestFailedError({ kind: 'timeout', message: 'no first token in 60 s' }), carriesNothing],
  [MalformedStreamError, () => new MalformedStreamError('data line is not JSON'), carriesNothing],
  [ImportFileError, () => new ImportFileError('/w/history.ndjson'), { file: '/w/history.ndjson' }],
  [ProfileError, () => new ProfileError('--profile nightly: /w/disagg-bench.yaml has no profile of that name (it has smoke)', '/w/disagg-bench.yaml'), { file: '/w/disagg-bench.yaml' }],
  [EtcdError, () => new EtcdError('/run/etcd/etcd.env names no ETCD_ENDPOINTS', { file: '/run/etcd/etcd.env', expected: 'ETCD_ENDPOINTS' }), { file: '/run/etcd/etcd.env', expected: 'ETCD_ENDPOINTS' }],
  [GitError, () => new GitError('git rev-list 1a2b..3c4d: unknown revision'), carriesNothing],
  [InputError, () => new InputError("job_time \"1h\" is not HH:MM:SS or D-HH:MM:SS", { place: 'slurm.job_time' }), { place: 'slurm.job_time' }],
  [EnvironmentError, () => new EnvironmentError('cannot read node_modules/chart.js/dist/chart.umd.js', { file: 'node_modules/chart.js/dist/chart.umd.js' }), { file: 'node_modules/chart.js/dist/chart.umd.js' }],
  [InternalError, () => new InternalError('RunSession.plan() must come before run()'), carriesNothing],
  [FailureError, () => new FailureError('disagg_perf_a failed:\n- job 12 ended FAILED', { place: 'disagg_perf_a' }), { place: 'disagg_perf_a' }],
];

describe('one error hierarchy', () => {
  it('has a row for every error class declared outside the engine', () => {
    expect(declared.length).toBeGreaterThan(20); // the walk sees the classes
    const rows = new Set(ROWS.map(([cls]) => cls.name));
    // A class its module keeps to itself (StoreNeedsUpgrade) is met only as its exported parent.
    const outsideEngine = declared.filter((d) => !d.file.startsWith(ENGINE) && d.exported);
    expect(outsideEngine.filter((d) => d.name !== 'DisaggBenchError' && !rows.has(d.name)).map((d) => `${d.file}: ${d.name}`)).toEqual([]);
    expect(declared.filter((d) => d.parent === 'Error').map((d) => `${d.file}: ${d.name}`)).toEqual(['runners/common/errors.ts: DisaggBenchError']);
  });

  it('every error class, the engine\'s too, reaches DisaggBenchError through classes of its own', () => {
    const parentOf = new Map(declared.map((d) => [d.name, d.parent]));
    const root = (name: string, seen = new Set<string>()): string => {
      const parent = parentOf.get(name);
      return parent === undefined || seen.has(name) ? name : root(parent, seen.add(name));
    };
    expect(declared.filter((d) => root(d.name) !== 'Error').map((d) => `${d.file}: ${d.name} -> ${root(d.name)}`)).toEqual([]);
    expect(declared.filter((d) => d.file.startsWith(ENGINE)).map((d) => d.name)).toEqual(expect.arrayContaining(['XferError', 'TransferError', 'MatrixError']));
    expect(new TransferError('ucx: rank 1 died', 'ucx', 1, [1])).toBeInstanceOf(DisaggBenchError);
  });

  it('has one usage error: every class whose name says usage is UsageError', () => {
    expect(declared.filter((d) => /usage|option|args/i.test(d.name)).map((d) => d.name)).toEqual(['UsageError']);
  });

  it.each(ROWS.map(([cls, make, carries]) => [cls.name, cls, make, carries] as const))('%s extends DisaggBenchError and renders what it carries', (name, cls, make, carries) => {
    const error = make() as DisaggBenchError;
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(DisaggBenchError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    for (const key of ['file', 'place', 'expected'] as const) {
      expect(error[key], key).toBe(carries[key]);
      if (carries[key]) expect(error.message, key).toContain(carries[key]);
    }
  });

  it('appends to a message the file, place or expectation it does not already say', () => {
    expect(withPlace('cannot lock /a: busy', { file: '/a' })).toBe('cannot lock /a: busy');
    expect(withPlace('job failed', { place: 'sbatch job.sh', expected: 'exit code 0' })).toBe('job failed (at sbatch job.sh; expected exit code 0)');
    const error = new DisaggBenchError('no test ids', { file: '/w/l.txt' });
    expect(error.message).toBe('no test ids (file /w/l.txt)');
    expect(error.file).toBe('/w/l.txt');
  });
});
