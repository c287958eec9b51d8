// The verdict of one finished job, from BOTH the scheduler's final state and the job's logs.
// (The Python framework read only the logs, so a job killed at its time limit could pass.)
import type { JobLogs, JobStatus } from '../scheduler/scheduler.ts';
import type { PlannedTest } from '../select/plan.ts';
import type { TestType } from '../contract/test-type.ts';
import type { Metric } from '../metrics/metric.ts';
import { extractMetrics } from '../metrics/log-parser.ts';
import { checkReferences, parseReferences } from '../metrics/references.ts';
import { readTailSync } from '../../runners/common/read-file.ts';

export interface JobOutcome {
  passed: boolean;
  /** Every reason the test failed. */
  failures: string[];
  metrics: Metric[];
  status: JobStatus;
}

export interface JudgeInput {
  test: PlannedTest;
  type: TestType;
  status: JobStatus;
  logs: JobLogs;
  logDir: string;
}

const TAIL_LINES = 20;

export async function judgeJob({ test, type, status, logs, logDir }: JudgeInput): Promise<JobOutcome> {
  const config = test.resolved!.config;
  if (status.state !== 'COMPLETED') {
    return { passed: false, failures: [describeFailedJob(status, logs)], metrics: [], status };
  }
  const specs = type.metrics(config, test.category);
  const extracted = await extractMetrics(logDir, specs);
  const verdict = type.verdict({
    testId: test.id,
    category: test.category,
    config,
    logDir,
    metrics: extracted.metrics,
    problems: extracted.problems,
  });
  // Reference syntax was checked at validation; here only the bounds matter.
  const references = parseReferences(type.references?.(config)).entries;
  const findings = checkReferences(extracted.metrics, references).map((f) => f.message);
  const failures = [...extracted.problems, ...verdict.failures, ...findings];
  return { passed: failures.length === 0 && verdict.passed, failures, metrics: extracted.metrics, status };
}

export function describeFailedJob(status: JobStatus, logs: JobLogs): string {
  const details = [
    status.exitCode !== undefined ? `exit code ${status.exitCode}` : undefined,
    status.signal ? `signal ${status.signal}` : undefined,
    status.nodes?.length ? `on ${status.nodes.join(',')}` : undefined,
  ].filter(Boolean);
  const lines = [`job ${status.id} ended ${status.state}${details.length ? ` (${details.join(', ')})` : ''}`];
  if (status.reason) lines.push(`reason: ${status.reason}`);
  for (const file of [logs.stderr, logs.stdout]) {
    const tail = tailOf(file, TAIL_LINES);
    if (tail) lines.push(`last lines of ${file}:\n${tail}`);
  }
  return lines.join('\n');
}

function tailOf(file: string, count: number): string | undefined {
  try {
    // Only the end is read: an error log may be gigabytes.
    const lines = readTailSync(file, 64 * 1024).trimEnd().split('\n');
    const text = lines.slice(-count).join('\n');
    return text.trim() ? text : undefined;
  } catch {
    return undefined;
  }
}
