// What Linux's /proc says of a process, for code that must tell whether a process is still the one
// it knew (a pid may be reused): its parent, its state, its start time, its command line. Used by
// the run's interruption (its workers, the npx that started it), the run claims of an OUTPUT_PATH
// and the test suite's leak check. Nothing (undefined) where /proc is missing or the process gone.
import { readFileSync } from 'node:fs';

export interface ProcessStat {
  pid: number;
  ppid: number;
  /** R, S, D, Z (zombie: ended, not reaped yet)... */
  state: string;
  /** Clock ticks since boot when it started: with the pid, names one process for good. */
  start: string;
}

export function processStat(pid: number): ProcessStat | undefined {
  try {
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(fields[1]), state: fields[0], start: fields[19] };
  } catch {
    return undefined;
  }
}

/** The process's arguments (undefined when gone or not ours to read). */
export function processArgv(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}
