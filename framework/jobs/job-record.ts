// job.json in a test's log folder: how its job ended, so a DEBUG_MODE replay can judge the same
// way the live run did (the Python framework forgot the scheduler's verdict entirely).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { JobStatus } from '../scheduler/scheduler.ts';
import { outputWriteError } from '../results/append-whole.ts';
import { READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';

export const JOB_RECORD_FILE = 'job.json';

export interface JobRecord {
  jobId: string;
  scheduler: string;
  status: JobStatus;
  submittedAt: string;
}

export function writeJobRecord(
  logDir: string,
  scheduler: string,
  job: { jobId: string; submittedAt: number },
  status: JobStatus,
): void {
  const record: JobRecord = { jobId: job.jobId, scheduler, status, submittedAt: new Date(job.submittedAt).toISOString() };
  const file = path.join(logDir, JOB_RECORD_FILE);
  try {
    writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
  } catch (error) {
    throw outputWriteError(file, error);
  }
}

export function readJobRecord(logDir: string): JobRecord | undefined {
  try {
    return JSON.parse(readTextFileSync(path.join(logDir, JOB_RECORD_FILE), READ_LIMITS.record)) as JobRecord;
  } catch {
    return undefined;
  }
}
