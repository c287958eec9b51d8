// Where the test suite's time goes: reads the JSON report of a Vitest run (scripts/test.sh keeps
// one with DISAGG_TEST_REPORT=FILE) and, when given, that run's output (for the lines scripts/
// test.sh and tests/setup/global-setup.ts print: typecheck, global setup, global teardown, total),
// and prints a table of every test file's wall time and the slowest tests.
// Command line: USAGE below (--help prints it).
//
// Files run side by side when Vitest has several workers, so the files' times may add up to more
// than the run's wall time; the `busy` line says how much of the wall time at least one file ran.
import { readFileSync } from 'node:fs';
import { cpus, hostname, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { maxOf, minOf } from '../runners/common/stats.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: npx tsx bench/suite-durations.ts REPORT.json [RUN.log] [--note TEXT]... [--top N]
  REPORT.json: a Vitest JSON report; RUN.log: that run's output; --note: a line for the table's
  head (repeatable); --top: how many of the slowest tests to list (default 20).`;

interface AssertionResult {
  fullName?: string;
  title: string;
  ancestorTitles?: string[];
  duration?: number | null;
  status: string;
}

interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
  status: string;
  assertionResults: AssertionResult[];
}

interface Report {
  startTime: number;
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: FileResult[];
}

const cli = benchOptions({ allowPositionals: true, options: { note: { type: 'string', multiple: true, default: [] }, top: { type: 'string', default: '20' } } }, USAGE);
const usage = cli.refuse;

function commandLine() {
  const files = cli.positionals;
  if (files.length < 1 || files.length > 2) usage(`${files.length} files given: expected one JSON report and at most one run log`);
  return { report: files[0], log: files[1] as string | undefined, notes: cli.values.note, top: cli.wholeNumber('top') };
}

function readReport(file: string): Report {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    usage(`${file}: ${(error as Error).message}`);
  }
  const r = data as Partial<Report>;
  if (!r || !Array.isArray(r.testResults)) usage(`${file}: not a Vitest JSON report (no testResults array)`);
  return r as Report;
}

/** The phase lines a run prints (scripts/test.sh, tests/setup/global-setup.ts); ANSI colours stripped. */
function phasesOf(logFile: string): Array<[string, string]> {
  // eslint-disable-next-line no-control-regex
  const text = readFileSync(logFile, 'utf8').replace(/\u001b\[[0-9;]*m/g, '');
  const phases: Array<[string, string]> = [];
  for (const [label, pattern] of [
    ['typecheck (tsc --noEmit)', /^typecheck: (.+)$/m],
    ['global setup', /^global setup: (.+)$/m],
    ['global teardown', /^global teardown: (.+)$/m],
    ['vitest (its own Duration line)', /^\s*Duration\s+(.+)$/m],
    ['npm test (typecheck + vitest)', /^npm test: (.+)$/m],
    ['summary', /^(unit: .+)$/m],
  ] as const) {
    const m = pattern.exec(text);
    if (m) phases.push([label, m[1].trim()]);
  }
  return phases;
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** Milliseconds of [start, end] covered by at least one interval. */
function covered(intervals: Array<[number, number]>): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [s, e] of sorted) {
    if (e <= end) continue;
    total += e - Math.max(s, end);
    end = e;
  }
  return total;
}

function main() {
  const args = commandLine();
  const report = readReport(args.report);
  const root = process.cwd();
  const files = report.testResults.map((f) => ({
    file: path.relative(root, f.name),
    ms: f.endTime - f.startTime,
    tests: f.assertionResults.length,
    status: f.status,
  }));
  files.sort((a, b) => b.ms - a.ms);
  const sumMs = files.reduce((n, f) => n + f.ms, 0);
  const first = minOf(report.testResults.map((f) => f.startTime));
  const last = maxOf(report.testResults.map((f) => f.endTime));
  const busyMs = covered(report.testResults.map((f) => [f.startTime, f.endTime]));

  const out: string[] = [];
  out.push(`# Test suite durations: ${path.basename(args.report)}`);
  out.push(`# machine: ${hostname()}, ${cpus().length} CPU(s) (${cpus()[0]?.model.trim() ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; table made ${new Date().toISOString().slice(0, 10)}, load now ${loadavg()[0].toFixed(2)}`);
  for (const note of args.notes) out.push(`# ${note}`);
  out.push('');
  out.push(`tests: ${report.numTotalTests} (${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests + report.numTodoTests} skipped) in ${files.length} files`);
  if (args.log) for (const [label, value] of phasesOf(args.log)) out.push(`${label}: ${value}`);
  out.push(`first file start -> last file end: ${seconds(last - first)} s; files' own times add up to ${seconds(sumMs)} s; busy (a file running): ${seconds(busyMs)} s`);
  out.push('');
  out.push('## Per file (wall time from its start to its end, slowest first)');
  out.push(`${'seconds'.padStart(8)} ${'share'.padStart(6)} ${'tests'.padStart(5)}  file`);
  for (const f of files) {
    out.push(`${seconds(f.ms).padStart(8)} ${`${((100 * f.ms) / sumMs).toFixed(1)}%`.padStart(6)} ${String(f.tests).padStart(5)}  ${f.file}${f.status === 'passed' ? '' : ` (${f.status})`}`);
  }
  out.push('');
  out.push(`## The ${args.top} slowest tests`);
  const tests = report.testResults.flatMap((f) =>
    f.assertionResults.map((t) => ({ file: path.relative(root, f.name), name: t.fullName ?? [...(t.ancestorTitles ?? []), t.title].join(' > '), ms: t.duration ?? 0 })),
  );
  tests.sort((a, b) => b.ms - a.ms);
  out.push(`${'seconds'.padStart(8)}  file > test`);
  for (const t of tests.slice(0, args.top)) out.push(`${seconds(t.ms).padStart(8)}  ${t.file} > ${t.name}`);
  process.stdout.write(out.join('\n') + '\n');
}

main();
