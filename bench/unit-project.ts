// The `unit` test project's time (`npm run test:unit`): `npx vitest run --project unit` under
// /usr/bin/time, --runs times (the first after a change of the tests or the framework fills Vitest's
// module cache; later runs find it as a developer's next run does). Prints the date, machine,
// command and load, each run's wall and CPU time (user + system of the process tree) and Vitest's
// own duration, and the slowest files of the last run (Vitest's JSON report). Goal: at most 30 s
// wall on the 2-core machine.
// Command line: USAGE below (--help prints it).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../framework/settings.ts';
import { appendResult, loadNow, printGoals, printRunHeader, printTable, type Goal } from './lib/report.ts';
import { benchArgs } from './lib/smoke.ts';
import { median } from './lib/stats.ts';
import { outputTail, timedCommandCpu } from './lib/timed-command.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/unit-project.ts [--runs 2] [--files tests/a.test.ts,...] [--slowest 10] [--smoke]
  --runs of the unit project (or of --files alone), the --slowest files listed. --smoke: one run of
  one file, no figure kept.`;

const cli = benchOptions({
  args: benchArgs(['--runs', '1', '--files', 'tests/common/size.test.ts']),
  options: {
    runs: { type: 'string', default: '2' },
    files: { type: 'string' },
    slowest: { type: 'string', default: '10' },
  },
}, USAGE);
const { values } = cli;
const runs = cli.wholeNumber('runs');
const files = values.files === undefined ? [] : cli.listOf('files', (f) => f, 'a test file');
const slowestCount = cli.wholeNumber('slowest', { min: 0 });

interface JsonReport {
  numTotalTests: number;
  numFailedTests: number;
  testResults: Array<{ name: string; startTime: number; endTime: number; assertionResults: unknown[] }>;
}

interface UnitRun {
  wallS: number;
  cpuS: number;
  /** Vitest's "Duration" line. */
  vitestDurationS: number | undefined;
  report: JsonReport;
}

async function runOnce(scratch: string, n: number): Promise<UnitRun> {
  const json = path.join(scratch, `report-${n}.json`);
  const args = ['vitest', 'run', '--project', 'unit', '--reporter=default', '--reporter=json', `--outputFile.json=${json}`, ...files];
  const run = await timedCommandCpu('npx', args, { cwd: packageRoot, timeoutMs: 1_800_000 });
  if (run.exitCode !== 0) throw new Error(`npx ${args.join(' ')} failed (exit ${run.exitCode}):\n${outputTail(run.output)}`);
  const duration = /Duration\s+([\d.]+)(m?s)/.exec(run.output.replace(/\x1b\[[\d;]*m/g, ''));
  const vitestDurationS = duration ? Number(duration[1]) / (duration[2] === 'ms' ? 1000 : 1) : undefined;
  return { wallS: run.wallS, cpuS: run.cpuS, vitestDurationS, report: JSON.parse(readFileSync(json, 'utf8')) as JsonReport };
}

async function main(): Promise<void> {
  printRunHeader();
  const scratch = mkdtempSync(path.join(tmpdir(), 'bench-unit-project-'));
  try {
    const results: UnitRun[] = [];
    for (let n = 0; n < runs; n++) results.push(await runOnce(scratch, n));
    const s = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(2));
    printTable('npx vitest run --project unit; seconds', ['run', 'wall', 'cpu', 'Vitest duration', 'files', 'tests'], results.map((r, i) => [
      String(i + 1), s(r.wallS), s(r.cpuS), s(r.vitestDurationS), String(r.report.testResults.length), String(r.report.numTotalTests),
    ]));
    const last = results[results.length - 1];
    const slowest = [...last.report.testResults].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime)).slice(0, slowestCount);
    printTable(`slowest files of run ${results.length} (start to end of each file; files overlap on the workers)`, ['file', 'seconds', 'tests'], slowest.map((f) => [
      path.relative(packageRoot, f.name), s((f.endTime - f.startTime) / 1000), String(f.assertionResults.length),
    ]));
    // The goal is the project as a developer runs it again: the last run (a warm module cache).
    const goals: Goal[] = [{ what: 'npx vitest run --project unit, wall', value: Number(last.wallS.toFixed(2)), limit: 30, atMost: true, unit: ' s' }];
    printGoals(goals);
    console.log(`load average at end: ${loadNow()}`);
    appendResult('unit-project', {
      runs: results.map((r) => ({ wallS: r.wallS, cpuS: r.cpuS, vitestDurationS: r.vitestDurationS, files: r.report.testResults.length, tests: r.report.numTotalTests })),
      wallMedianS: median(results.map((r) => r.wallS)),
      slowest: slowest.map((f) => ({ file: path.relative(packageRoot, f.name), s: (f.endTime - f.startTime) / 1000 })),
    }, goals);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
