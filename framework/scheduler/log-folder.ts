// A test's log folder, OUTPUT_PATH/slurm_logs/<test id>/, and the names of the files the framework
// and the schedulers keep in it: one module builds and parses them all (a type's job builder adds
// its own logs beside them).
//   job.sh                 the job script the scheduler runs (written by the test type's builder)
//   resolved_config.yaml   the config as run, secrets redacted (written by the jobs layer)
//   slurm-<job id>.out     the job's stdout, .err its stderr (sbatch's --output/--error, the local
//                          scheduler's redirections); a replay finds the job id in the name
//   job.json               how the job ended, so a DEBUG_MODE replay judges the same way the live
//                          run did (the Python framework forgot the scheduler's verdict entirely)
//   job.ended              the job script's exit status, written as it exits (jobEndedFunction): a
//                          hint that the scheduler is about to report the end (job-end-mark.ts)
// job.json is written whole or not at all (a full disk must not leave a 0-byte file that a replay
// misreads); a file that is there but is not a job record is said to be unreadable, never taken for
// "no record". An earlier job's folder is moved aside whole (setAsideEarlierLogs), never deleted.
import { existsSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { JobStatus } from './scheduler.ts';
import { shellQuote } from '../../runners/common/shell.ts';
import { writeWholeSync } from '../../runners/common/write-whole.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';

/** The folder under OUTPUT_PATH that holds every test's log folder. */
export const LOG_FOLDERS = 'slurm_logs';
export const JOB_SCRIPT_FILE = 'job.sh';
export const RESOLVED_CONFIG_FILE = 'resolved_config.yaml';
export const JOB_RECORD_FILE = 'job.json';
export const JOB_ENDED_FILE = 'job.ended';

/**
 * The bash function every job script defines and calls last on its way out, with its exit status:
 * `mark_job_ended STATUS` writes it to the log folder's job.ended. Nothing judges from it (the
 * scheduler's state and the logs do); the run watching the job polls at once when it appears.
 */
export function jobEndedFunction(logDir: string): string {
  return `mark_job_ended() { printf '%s\\n' "$1" >${shellQuote(path.join(logDir, JOB_ENDED_FILE))} 2>/dev/null || true; }`;
}

/** OUTPUT_PATH/slurm_logs/<test id>/: where a test's job writes everything. */
export function testLogDir(outputPath: string, testId: string): string {
  return path.join(outputPath, LOG_FOLDERS, testId);
}

/** The job's stdout and stderr in its log folder: slurm-<job id>.out / .err. */
export function jobOutputFiles(logDir: string, jobId: string): { stdout: string; stderr: string } {
  return { stdout: path.join(logDir, `slurm-${jobId}.out`), stderr: path.join(logDir, `slurm-${jobId}.err`) };
}

/** The same names for sbatch, which puts the job id in place of `%j`. */
export function sbatchOutputPatterns(logDir: string): { output: string; error: string } {
  const { stdout, stderr } = jobOutputFiles(logDir, '%j');
  return { output: stdout, error: stderr };
}

/** The job ids whose stdout is in a log folder (slurm-<id>.out), in the folder's order. */
export function jobIdsOfOutputs(fileNames: string[]): string[] {
  return fileNames.map((f) => /^slurm-(.+)\.out$/.exec(f)?.[1]).filter((id): id is string => id !== undefined);
}

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

/**
 * A test's log folder belongs to one job: job scripts append to their logs (6_bench.log...), so a
 * new job of the test must not find an earlier job's logs there (a second run on the same
 * OUTPUT_PATH, RESUME submitting a cancelled test again). An existing, non-empty folder is moved to
 * slurm_logs/<test id>.<its job id>/; returns where it went, or undefined.
 */
export function setAsideEarlierLogs(logDir: string): string | undefined {
  let entries: string[];
  try {
    entries = readdirSync(logDir);
  } catch {
    return undefined;
  }
  if (entries.length === 0) return undefined;
  const earlierJob = readJobRecord(logDir)?.jobId ?? jobIdsOfOutputs(entries)[0] ?? new Date().toISOString().replace(/[:.]/g, '-');
  // The name must fit a file name's 255 bytes (config/ids.ts keeps test ids short enough for a
  // job id): a job id too long for it is cut, and the counter keeps the names apart.
  const room = 255 - Buffer.byteLength(path.basename(logDir)) - '.'.length - '-999'.length;
  const job = Buffer.byteLength(earlierJob) <= room ? earlierJob : Buffer.from(earlierJob).subarray(0, Math.max(0, room)).toString('utf8').replace(/\uFFFD$/, '');
  let target = `${logDir}.${job}`;
  for (let n = 2; existsSync(target); n++) target = `${logDir}.${job}-${n}`;
  renameSync(logDir, target);
  return target;
}
