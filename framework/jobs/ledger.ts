// The ledger: every job a run owns, one JSON line per state change, appended as it happens, so a
// crashed run can be cleaned up (cancel what it left) or resumed (pick its jobs up, not resubmit).
import { mkdirSync } from 'node:fs';
import { appendWholeSync } from '../../runners/common/append-whole.ts';
import path from 'node:path';
import type { JobState } from '../scheduler/scheduler.ts';
import { READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';

export const LEDGER_FILE = 'ledger.jsonl';
/** Plain job ids, one per line, as the Python framework kept them for cleanup scripts. */
export const JOBS_FILE = 'jobs.txt';

export interface LedgerEntry {
  time: string;
  /** The run that owns the job (one per Vitest invocation, shared by its projects). */
  run: string;
  scheduler: string;
  test: string;
  job: string;
  /** SUBMITTED by this run, or ADOPTED from an earlier run's ledger (RESUME=1). */
  state: JobState | 'SUBMITTED' | 'ADOPTED';
  terminal: boolean;
  batch?: number;
  logDir?: string;
  reason?: string;
  /** On SUBMITTED: seconds the test waits for the job (a resumed run keeps the same deadline). */
  timeoutSec?: number;
  /** On ADOPTED: the run that submitted the job. */
  adoptedFrom?: string;
  /** On CANCELLED: cancelled because the run was interrupted (a resumed run submits it again). */
  interrupted?: boolean;
}

export class Ledger {
  readonly file: string;

  constructor(
    readonly outputPath: string,
    readonly run: string,
    readonly scheduler: string,
  ) {
    mkdirSync(outputPath, { recursive: true });
    this.file = path.join(outputPath, LEDGER_FILE);
  }

  /**
   * Appends one line; lines are small, so O_APPEND keeps concurrent writers' lines whole, and a
   * line that cannot be written whole (a full disk) is not written at all (OutputWriteError).
   */
  record(entry: Omit<LedgerEntry, 'time' | 'run' | 'scheduler'>): void {
    const line: LedgerEntry = { time: new Date().toISOString(), run: this.run, scheduler: this.scheduler, ...entry };
    appendWholeSync(this.file, JSON.stringify(line) + '\n');
    if (entry.state === 'SUBMITTED') appendWholeSync(path.join(this.outputPath, JOBS_FILE), `${entry.job}\n`);
  }
}

/** Every entry of a ledger; a torn last line (a killed writer) is skipped, not fatal. */
export function readLedger(outputPath: string): LedgerEntry[] {
  let text: string;
  try {
    text = readTextFileSync(path.join(outputPath, LEDGER_FILE), READ_LIMITS.record);
  } catch {
    return [];
  }
  const entries: LedgerEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as LedgerEntry);
    } catch {
      // torn line: ignored
    }
  }
  return entries;
}

/** The latest entry of each (test, job) pair. */
export function latestJobStates(entries: LedgerEntry[]): LedgerEntry[] {
  const latest = new Map<string, LedgerEntry>();
  for (const entry of entries) latest.set(`${entry.test}\u0000${entry.job}`, entry);
  return [...latest.values()];
}

/** Jobs of a run (or of every run) whose last known state is not terminal. */
export function unfinishedJobs(entries: LedgerEntry[], run?: string): LedgerEntry[] {
  return latestJobStates(entries).filter((e) => !e.terminal && (run === undefined || e.run === run));
}

/** For RESUME: the most recent job of each test, with its last known state (lines are in time order). */
export function lastJobPerTest(entries: LedgerEntry[]): Map<string, LedgerEntry> {
  const byTest = new Map<string, LedgerEntry>();
  for (const entry of entries) byTest.set(entry.test, entry);
  return byTest;
}

/** The SUBMITTED entry of a job (when and with which timeout it went out). */
export function submissionOf(entries: LedgerEntry[], test: string, job: string): LedgerEntry | undefined {
  return entries.find((e) => e.test === test && e.job === job && e.state === 'SUBMITTED');
}
