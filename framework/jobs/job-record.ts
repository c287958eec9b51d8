// job.json in a test's log folder: how its job ended, so a DEBUG_MODE replay can judge the same
// way the live run did (the Python framework forgot the scheduler's verdict entirely). Written
// whole or not at all (a full disk must not leave a 0-byte file that a replay misreads); a file
// that is there but is not a job record is said to be unreadable, never taken for "no record".
import path from 'node:path';
import type { JobStatus } from '../scheduler/scheduler.ts';
import { writeWholeSync } from '../results/write-whole.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';

export const JOB_RECORD_FILE = 'job.json';

export interface JobRecord {
  jobId: string;
  scheduler: string;
  status: JobStatus;
  submittedAt: string;
}

export type JobRecordRead =
  | { kind: 'found'; record: JobRecord }
  | { kind: 'missing' }
  | { kind: 'unreadable'; file: string; why: string };

export function writeJobRecord(
  logDir: string,
  scheduler: string,
  job: { jobId: string; submittedAt: number },
  status: JobStatus,
): void {
  const record: JobRecord = { jobId: job.jobId, scheduler, status, submittedAt: new Date(job.submittedAt).toISOString() };
  writeWholeSync(path.join(logDir, JOB_RECORD_FILE), JSON.stringify(record, null, 2) + '\n');
}

/** The job record of a log folder: found, missing, or there but unreadable (with why). */
export function readJobRecordFile(logDir: string): JobRecordRead {
  const file = path.join(logDir, JOB_RECORD_FILE);
  let text: string;
  try {
    text = readTextFileSync(file, READ_LIMITS.record);
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    return /\(ENOENT\)$/.test(error.reason) ? { kind: 'missing' } : { kind: 'unreadable', file, why: error.reason };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { kind: 'unreadable', file, why: text.length === 0 ? 'is empty' : `is not JSON (${(error as Error).message})` };
  }
  const r = data as Partial<JobRecord> | null;
  const status = r?.status as Partial<JobStatus> | undefined;
  if (!r || typeof r !== 'object' || typeof r.jobId !== 'string' || !status || typeof status.state !== 'string' || typeof status.terminal !== 'boolean') {
    return { kind: 'unreadable', file, why: 'is not a job record (jobId, status.state and status.terminal expected)' };
  }
  return { kind: 'found', record: r as JobRecord };
}

/** The job record when there is a readable one; undefined when it is missing or unreadable. */
export function readJobRecord(logDir: string): JobRecord | undefined {
  const read = readJobRecordFile(logDir);
  return read.kind === 'found' ? read.record : undefined;
}
