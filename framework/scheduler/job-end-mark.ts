// A job's own word that it is ending: its script writes job.ended into its log folder as it exits
// (log-folder.ts), a moment before the scheduler reports the end. Watching the folder (inotify on
// Linux) lets the watcher poll the scheduler then rather than at its grown interval; the scheduler's
// answer stays the only verdict. Where the filesystem gives no events (a job on another host
// writing to NFS) nothing is heard and polling alone finds the end, as before.
import { existsSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { JOB_ENDED_FILE } from './log-folder.ts';

export interface EndMarkListener {
  /** Stops listening; idempotent. */
  close(): void;
  /** Why the folder cannot be watched (polling alone then), when it cannot. */
  unavailable?: string;
}

/**
 * Calls `onMark` each time job.ended appears or changes in `logDir` (and once at once when it is
 * already there). The watch never keeps the process alive, and a watch that fails later (the folder
 * removed) closes itself quietly: the scheduler's polls are still running.
 */
export function listenForEndMark(logDir: string, onMark: () => void): EndMarkListener {
  let watcher: FSWatcher | undefined;
  const close = () => {
    watcher?.close();
    watcher = undefined;
  };
  try {
    watcher = watch(logDir, { persistent: false }, (_event, name) => {
      if (name === JOB_ENDED_FILE) onMark();
    });
  } catch (error) {
    return { close, unavailable: `cannot watch ${logDir}: ${(error as Error).message}` };
  }
  watcher.on('error', close);
  // Written before the watch began (a job that ended at once, an adopted job): heard now.
  if (existsSync(path.join(logDir, JOB_ENDED_FILE))) queueMicrotask(onMark);
  return { close };
}
