// One run of a bisection, of an end or a step: `disagg-bench run <type> -t <test>` in a process of
// its own, with WORK_DIR pointing at the step's checkout (or the step's container image set), its own output
// folder and no history (a step measures an old state: it is no run of the project's history), then
// the metric's value read back from the run's results.json. The child runs in its own process
// group, so a Ctrl-C at the terminal reaches the bisection alone, which passes exactly one signal
// on (stop()): the run then cancels its jobs and ends as it does on any interruption.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../settings.ts';
import type { TestRecord } from '../../results/json.ts';
import { labelsKey } from '../series-key.ts';
import { JOB_SCRIPT_FILE } from '../../scheduler/log-folder.ts';
import type { MetricRef } from './metric-ref.ts';
import { belowResolution, belowResolutionText } from '../../metrics/resolution.ts';

export interface StepRunInput {
  testId: string;
  testType: string;
  metric: MetricRef;
  /** The run's OUTPUT_PATH, a new folder for each measurement (its run folder is made under it). */
  outputPath: string;
  /** Variables of the run: WORK_DIR, SCHEDULER, CONTAINER_IMAGE... on top of this process's. */
  env: Record<string, string>;
  /** The container image the step is about: its job script must name it. */
  image?: string;
}

export interface StepValue {
  value?: number;
  /** Why there is no value: the test failed, or did not yield the metric. */
  why?: string;
  higherIsBetter?: boolean;
  /** The step the value was printed rounded to (Metric.rounded). */
  rounded?: number;
  /** The figure was printed rounded to zero: no measurement (`why` says so). */
  unmeasured?: boolean;
  /** The job does not start in the step's image: bisecting images would measure the same thing each time. */
  imageUnused?: boolean;
}

const OUTPUT_TAIL = 4_000;
const NOT_INHERITED = ['DEBUG_MODE', 'DEBUG_JOB_ID', 'RESUME', 'DISAGG_TEST_LIST', 'TEST_LIST', 'DISAGG_RUN_ID'];
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The -t pattern that selects exactly this test (Vitest matches it against "<type> <test id>"). */
export const testNamePattern = (testId: string) => `(^| )${escapeRegExp(testId)}$`;

/** The one value of the metric in a test's record (the labels given, else its only label set). */
export function metricValueOf(record: TestRecord, metric: MetricRef): StepValue {
  const own = record.metrics.filter((m) => m.name === metric.name);
  const picked = metric.labels ? own.filter((m) => labelsKey(m.labels) === labelsKey(metric.labels!)) : own;
  if (picked.length === 1) {
    const [m] = picked;
    // a print of zero is no measurement: a step with it is skipped, as one with no value
    if (belowResolution(m)) return { why: `${metric.name}${labelsText(m.labels)} was printed rounded to zero (${belowResolutionText(m)}): no measurement`, unmeasured: true };
    return { value: m.value, higherIsBetter: m.higherIsBetter, ...(m.rounded !== undefined && { rounded: m.rounded }) };
  }
  if (own.length === 0) return { why: `it yielded no ${metric.name} (it yielded ${[...new Set(record.metrics.map((m) => m.name))].join(', ') || 'no metric'})` };
  return { why: `${metric.name} has ${picked.length === 0 ? 'no value with the labels asked for' : 'several values'}; name one of ${own.map((m) => `${metric.name}${labelsText(m.labels)}`).join(', ')}` };
}

export const labelsText = (labels: Record<string, string | number>) => {
  const entries = Object.entries(labels);
  return entries.length ? `[${entries.map(([k, v]) => `${k}=${v}`).join(',')}]` : '';
};

export class StepRun {
  private child?: ChildProcess;
  private stopped?: NodeJS.Signals;

  /** Runs the test once; resolves with its value, or why there is none. */
  async measure(input: StepRunInput): Promise<StepValue> {
    const bin = path.join(packageRoot, 'bin/disagg-bench.js');
    const args = [bin, 'run', input.testType, '-t', testNamePattern(input.testId), '--output', input.outputPath, '--run-kind', 'local'];
    const env: NodeJS.ProcessEnv = { ...process.env, DISAGG_HISTORY: 'off', DISAGG_PROGRESS: 'off', ...input.env };
    // A step is a new run of one test: not a replay, not a resumed run, not a test list's selection.
    for (const name of NOT_INHERITED) delete env[name];
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL);
    };
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      this.child = child;
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      child.on('error', reject);
      child.on('close', (c) => resolve(c));
    }).finally(() => (this.child = undefined));
    if (this.stopped) return { why: `interrupted (${this.stopped})` };
    const record = readRecord(input.outputPath, input.testId);
    if (!record) return { why: `the run wrote no record of the test (exit ${code}): ${lastLines(tail)}` };
    if (input.image && record.logDir && !jobNamesImage(record.logDir, input.image)) {
      return { why: `the job of ${input.testId} does not start in the image ${input.image} (its job script names no container image), so an image changes nothing it runs`, imageUnused: true };
    }
    if (record.verdict !== 'passed') return { why: `the test ${record.verdict}: ${record.failures[0] ?? record.skipReason ?? lastLines(tail)}` };
    return metricValueOf(record, input.metric);
  }

  /** Passes the signal on to the run in flight (it cancels its jobs and ends); later steps are not started. */
  stop(signal: NodeJS.Signals): void {
    this.stopped = signal;
    if (this.child?.pid && this.child.exitCode === null) {
      try {
        process.kill(this.child.pid, signal);
      } catch {
        // already gone
      }
    }
  }
}

function readRecord(outputPath: string, testId: string): TestRecord | undefined {
  try {
    const results = JSON.parse(readFileSync(path.join(outputPath, 'latest', 'results.json'), 'utf8')) as { records: TestRecord[] };
    return results.records.filter((r) => r.testId === testId && !r.saving).at(-1);
  } catch {
    return undefined;
  }
}

function jobNamesImage(logDir: string, image: string): boolean {
  try {
    return readFileSync(path.join(logDir, JOB_SCRIPT_FILE), 'utf8').includes(image);
  } catch {
    return true; // no script to read: the test's own failure says why
  }
}

const lastLines = (text: string) => text.trimEnd().split('\n').slice(-3).join(' | ') || 'no output';
