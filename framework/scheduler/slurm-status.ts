// The status commands of the SLURM backend (sacct, squeue, the jobcomp file through `sacct -c`)
// and the parsing of their output into JobStatus. One command covers any number of jobs.
import type { JobState, JobStatus } from './scheduler.ts';
import { expandHostlist } from '../../runners/common/hostlist.ts';
import {
  isStepId,
  isTerminal,
  neverStartReason,
  parseExitCode,
  parseJobId,
  parseState,
  parseWaitStatus,
  type ParsedExit,
  type StateOptions,
} from './states.ts';

/** One job as a status command reported it, under every id form it can be asked by. */
export interface StatusRecord {
  /** Raw id plus display forms (`123_4`, `123+0`) where they differ. */
  keys: string[];
  status: Omit<JobStatus, 'id'>;
}

const SACCT_FIELDS = 'JobID,JobIDRaw,State,ExitCode,Reason,NodeList,Start,End';
// `:|` gives each field a `|` suffix and no padding or truncation.
const SQUEUE_FIELDS = [
  'JobID', 'ArrayJobID', 'ArrayTaskID', 'HetJobID', 'HetJobOffset', 'State', 'Reason',
  'exit_code', 'NodeList', 'StartTime', 'EndTime',
]
  .map((field) => `${field}:|`)
  .join(',');

/** `sacct -X -P -n -j ids -o ...`; `since` (epoch ms) keeps records of older jobs with reused ids out. */
export function sacctStatusArgs(ids: readonly string[], since?: number): string[] {
  const args = ['-X', '-P', '-n', '-j', ids.join(','), '-o', SACCT_FIELDS];
  if (since !== undefined) args.push('-S', formatSlurmTime(since));
  return args;
}

/** Reads the jobcomp file (JobCompType=jobcomp/filetxt) with sacct's parser: same output form. */
export function jobcompStatusArgs(ids: readonly string[]): string[] {
  return ['-c', '-P', '-n', '-j', ids.join(','), '-o', SACCT_FIELDS];
}

/** `-t all` keeps finished jobs in the answer for as long as the controller remembers them (MinJobAge). */
export function squeueStatusArgs(ids: readonly string[]): string[] {
  return ['-h', '-t', 'all', '-j', ids.join(','), '-O', SQUEUE_FIELDS];
}

// Placeholders SLURM prints for "no value" (squeue writes both `None` and `NONE`).
const NO_VALUE = new Set(['', 'n/a', 'none', 'unknown', '(null)']);

function value(text: string | undefined): string | undefined {
  const trimmed = text?.trim() ?? '';
  return NO_VALUE.has(trimmed.toLowerCase()) ? undefined : trimmed;
}

/** SLURM prints local time without a zone: `2026-11-21T15:54:27`. */
export function parseSlurmTime(text: string | undefined): number | undefined {
  const match = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)$/.exec(text?.trim() ?? '');
  if (!match) return undefined;
  const [y, mo, d, h, mi, s] = match.slice(1).map(Number);
  return new Date(y, mo - 1, d, h, mi, s).getTime();
}

export function formatSlurmTime(epochMs: number): string {
  const date = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}` +
    `T${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
  );
}

// States in which SLURM's StartTime is only an estimate, not when the job started.
const NOT_STARTED: ReadonlySet<JobState> = new Set<JobState>(['PENDING', 'REQUEUED', 'REQUEUE_HOLD']);

function buildStatus(
  fields: { state: string; exit: ParsedExit; reason?: string; nodeList?: string; start?: string; end?: string },
  options: StateOptions,
): Omit<JobStatus, 'id'> {
  const { state, detail } = parseState(fields.state);
  const terminal = isTerminal(state, options);
  const reason = value(fields.reason) ?? detail;
  const nodes = expandHostlist(value(fields.nodeList));
  const startTime = NOT_STARTED.has(state) ? undefined : parseSlurmTime(fields.start);
  const endTime = terminal ? parseSlurmTime(fields.end) : undefined;
  const cannotStart = NOT_STARTED.has(state) ? neverStartReason(reason) : undefined;
  return {
    state,
    terminal,
    ...(reason !== undefined && { reason }),
    ...(cannotStart !== undefined && { cannotStart }),
    ...(terminal && fields.exit.exitCode !== undefined && { exitCode: fields.exit.exitCode }),
    ...(terminal && fields.exit.signal !== undefined && { signal: fields.exit.signal }),
    ...(nodes.length > 0 && { nodes }),
    ...(startTime !== undefined && { startTime }),
    ...(endTime !== undefined && { endTime }),
  };
}

function lines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line.trim() !== '');
}

/** Parses `sacct -P` (or `sacct -c -P`) output made with sacctStatusArgs/jobcompStatusArgs. */
export function parseSacctStatus(stdout: string, options: StateOptions = {}): StatusRecord[] {
  const records: StatusRecord[] = [];
  for (const line of lines(stdout)) {
    const [jobId, rawId, state, exitCode, reason, nodeList, start, end] = line.split('|');
    if (state === undefined || isStepId(jobId) || !parseJobId(rawId)) continue;
    const keys = [...new Set([rawId.trim(), jobId.trim()])];
    const status = buildStatus({ state, exit: parseExitCode(exitCode), reason, nodeList, start, end }, options);
    records.push({ keys, status });
  }
  return records;
}

/** Parses squeue output made with squeueStatusArgs. */
export function parseSqueueStatus(stdout: string, options: StateOptions = {}): StatusRecord[] {
  const records: StatusRecord[] = [];
  for (const line of lines(stdout)) {
    const [rawId, arrayJob, arrayTask, hetJob, hetOffset, state, reason, waitStatus, nodeList, start, end] =
      line.split('|');
    if (end === undefined || !parseJobId(rawId)) continue;
    const keys = [rawId.trim()];
    const task = value(arrayTask);
    if (value(arrayJob) && task) keys.push(`${arrayJob.trim()}_${/^\d+$/.test(task) ? task : `[${task.replace(/^\[|\]$/g, '')}]`}`);
    if (value(hetJob) && value(hetOffset)) keys.push(`${hetJob.trim()}+${hetOffset.trim()}`);
    const status = buildStatus({ state, exit: parseWaitStatus(waitStatus), reason, nodeList, start, end }, options);
    records.push({ keys: [...new Set(keys)], status });
  }
  return records;
}

/**
 * Adds the records' statuses to `into` for the requested ids they match (by any id form). A later
 * record wins: sacct lists a reused id's older record first.
 */
export function collectStatuses(
  requested: readonly string[],
  records: readonly StatusRecord[],
  into: Map<string, JobStatus>,
): Map<string, JobStatus> {
  const wanted = new Set(requested);
  for (const record of records) {
    for (const key of record.keys) {
      if (wanted.has(key)) into.set(key, { id: key, ...record.status });
    }
  }
  return into;
}
