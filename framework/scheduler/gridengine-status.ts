// What Grid Engine says about jobs, parsed: `qstat -u '*' -xml` (every queued and running job in
// one command), `qstat -j ids` (why pending jobs wait) and the cell's accounting file (how
// finished jobs ended: qstat forgets a job the moment it ends). States are mapped in states.ts.
import { gridEngineEndState, gridEngineState, type GridEngineEnd } from './states.ts';
import type { JobStatus } from './scheduler.ts';

/** A job qstat lists: its id, qstat's state letters, where it runs. */
export interface LiveJob {
  id: string;
  letters: string;
  /** The queue instance (`disagg.q@vm`) of a running job. */
  queue?: string;
  startTime?: number;
}

const xmlText = (block: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(block)?.[1]?.trim();

/** qstat prints local time without a zone: `2026-12-07T03:35:33`. */
function localTime(text: string | undefined): number | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/.exec(text ?? '');
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  return new Date(y, mo - 1, d, h, mi, s).getTime();
}

/** `qstat -u '*' -xml`: one entry per job (an array job's tasks share its id and are not used here). */
export function parseQstatXml(xml: string): LiveJob[] {
  const jobs: LiveJob[] = [];
  for (const m of xml.matchAll(/<job_list[^>]*>([\s\S]*?)<\/job_list>/g)) {
    const id = xmlText(m[1], 'JB_job_number');
    const letters = xmlText(m[1], 'state');
    if (!id || !letters) continue;
    const queue = xmlText(m[1], 'queue_name') || undefined;
    const startTime = localTime(xmlText(m[1], 'JAT_start_time'));
    jobs.push({ id, letters, ...(queue && { queue }), ...(startTime !== undefined && { startTime }) });
  }
  return jobs;
}

/**
 * `qstat -j ids`: each job's reason to wait, from its `error reason` (a job in error state) or,
 * else, its first `scheduling info` line.
 */
export function parseWaitReasons(text: string): Map<string, { reason: string; error: boolean }> {
  const reasons = new Map<string, { reason: string; error: boolean }>();
  let id: string | undefined;
  for (const line of text.split('\n')) {
    const number = /^job_number:\s+(\d+)/.exec(line);
    if (number) {
      id = number[1];
      continue;
    }
    if (!id) continue;
    const error = /^error reason\s+\d*:?\s*(.*)$/.exec(line);
    if (error) reasons.set(id, { reason: error[1].trim(), error: true });
    const info = /^scheduling info:\s+(.*)$/.exec(line);
    // "There are no messages available": the scheduler has not looked at it yet, which says nothing.
    if (info && !reasons.has(id) && !/no messages available/i.test(info[1])) reasons.set(id, { reason: info[1].trim(), error: false });
  }
  return reasons;
}

/** A job's master record in the accounting file, and the hosts its parallel tasks ran on. */
export interface AccountingRecord {
  id: string;
  host: string;
  /** The master's host first, then every other host a task of the job ran on (qrsh -inherit). */
  hosts: string[];
  submitTime: number;
  startTime: number;
  endTime: number;
  failed: number;
  exitStatus: number;
  wallclockSec: number;
}

/**
 * The accounting file's records of the given ids (accounting(5): colon-separated, job_number the
 * 6th field, failed and exit_status the 12th and 13th; pe_taskid the 4th from the end, NONE for
 * a job's own record). A later record of an id wins (an id reused after the cell was reset). A
 * parallel task's record (written as the task ends, so before its job's own) gives its host.
 */
export function parseAccounting(text: string, ids: ReadonlySet<string>): Map<string, AccountingRecord> {
  const records = new Map<string, AccountingRecord>();
  const taskHosts = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const f = line.split(':');
    if (f.length < 20 || !ids.has(f[5])) continue;
    if (f[f.length - 4] !== 'NONE') {
      taskHosts.set(f[5], (taskHosts.get(f[5]) ?? new Set()).add(f[1]));
      continue;
    }
    records.set(f[5], {
      id: f[5],
      host: f[1],
      hosts: [...new Set([f[1], ...(taskHosts.get(f[5]) ?? [])])],
      submitTime: Number(f[8]) * 1000,
      startTime: Number(f[9]) * 1000,
      endTime: Number(f[10]) * 1000,
      failed: Number.parseInt(f[11], 10),
      exitStatus: Number(f[12]),
      wallclockSec: Number(f[13]),
    });
    taskHosts.delete(f[5]);
  }
  return records;
}

/** A queued or running job's status. */
export function liveStatus(job: LiveJob, wait?: { reason: string; error: boolean }): JobStatus {
  const state = gridEngineState(job.letters);
  const host = job.queue?.split('@')[1];
  return {
    id: job.id,
    state,
    terminal: false,
    ...(wait && state === 'PENDING' && { reason: wait.reason }),
    // A job in error state stays queued until an operator clears it (qmod -cj): it will not start by itself.
    ...(wait?.error && { cannotStart: `error state: ${wait.reason}` }),
    ...(host && { nodes: [host] }),
    ...(job.startTime !== undefined && state !== 'PENDING' && { startTime: job.startTime }),
  };
}

/** A finished job's status, from its accounting record. */
export function endedStatus(record: AccountingRecord, context: Pick<GridEngineEnd, 'timeLimitSec' | 'cancelledHere'>): JobStatus {
  const end = gridEngineEndState({ failed: record.failed, exitStatus: record.exitStatus, wallclockSec: record.wallclockSec, ...context });
  return {
    id: record.id,
    state: end.state,
    terminal: true,
    ...(record.failed !== 0 && { reason: `failed ${record.failed}` }),
    ...(end.exitCode !== undefined && { exitCode: end.exitCode }),
    ...(end.signal !== undefined && { signal: end.signal }),
    nodes: record.hosts,
    ...(record.startTime > 0 && { startTime: record.startTime }),
    endTime: record.endTime,
  };
}
