// The launcher watch of cancellation.ts: which npm started this run, and when it is gone. npx (npm
// exec) starts its command through npm's script shell, `sh -c ...` by default: a SIGTERM to npx
// (what `kill <pid>` or a job runner sends) reaches that shell, which dies of it without passing it
// on, and the run was re-parented and ran every remaining job to its end (npx also dies of SIGKILL
// unheard). So when npm started this run, the run watches its launcher and ends as on SIGTERM once
// npm (or the shell between) is gone. A run not started by npm is not watched (`nohup node
// .../vitest run &` may outlive its shell on purpose).
import path from 'node:path';
import { processArgv, processStat } from '../../runners/common/proc.ts';

const POLL_MS = 500;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh']);

interface Proc {
  pid: number;
  ppid: number;
  /** Start time: a reused pid is another process. */
  start: string;
  argv: string[];
}

function proc(pid: number): Proc | undefined {
  const stat = processStat(pid);
  const argv = processArgv(pid);
  return stat && argv ? { pid, ppid: stat.ppid, start: stat.start, argv } : undefined;
}

/** npm and npx set their title to `npm exec ...`, `npm test`...; older ones run npm-cli.js / npx-cli.js. */
function isNpm(p: Proc): boolean {
  const first = p.argv[0] ?? '';
  return /^npm( |$)/.test(first) || ['npm', 'npx'].includes(path.basename(first)) || p.argv.some((a) => /np[mx]-cli\.js$/.test(a));
}

/** The npm process that started this one (directly, or through one shell), if any. */
export function npmLauncher(env: NodeJS.ProcessEnv = process.env): { npm: Proc; parent: Proc } | undefined {
  if (!env.npm_command && !env.npm_lifecycle_event) return undefined; // npm sets these for what it runs
  const parent = proc(process.ppid);
  if (!parent) return undefined;
  if (isNpm(parent)) return { npm: parent, parent };
  if (!SHELLS.has(path.basename(parent.argv[0] ?? ''))) return undefined;
  const grand = proc(parent.ppid);
  return grand && isNpm(grand) ? { npm: grand, parent } : undefined;
}

const gone = (p: Proc) => proc(p.pid)?.start !== p.start;

/**
 * Whether npm started this process and is already gone: npm's variables are set but the process
 * was re-parented to pid 1 (killed in the seconds before the watch began: Vitest reads its config
 * 2-10 s after its start on a busy machine).
 */
export function orphanedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.npm_command || env.npm_lifecycle_event) && process.ppid === 1;
}

/** Calls `onGone` once when the npm that started this process (or the shell between) is gone. */
export function watchLauncher(onGone: (why: string) => void): { stop(): void } {
  if (orphanedByNpm()) {
    // Now, but not inside the caller's own start-up (a config being read, a command being parsed).
    setImmediate(() => onGone('the npm that started this run is gone (this process was re-parented to pid 1)'));
    return { stop() {} };
  }
  const launcher = npmLauncher();
  if (!launcher) return { stop() {} };
  const { npm, parent } = launcher;
  const timer = setInterval(() => {
    if (!gone(npm) && !gone(parent) && process.ppid === parent.pid) return;
    clearInterval(timer);
    onGone(`${npm.argv.join(' ').split(' ').slice(0, 2).join(' ')} (pid ${npm.pid}), which started this run, is gone`);
  }, POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
