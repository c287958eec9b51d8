// One running job of the local scheduler: `bash <script>` as the leader of its own process group,
// its time limit, its cancellation, and how its end maps onto SLURM's final states.
// Every process the job starts stays in that group (unless it calls setsid itself), so one signal
// to the group reaches all of them, as SLURM's process tracking does on a node.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { selfCancelMarker } from './local-env.ts';

export type LocalFinalState = 'COMPLETED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED';

export interface LocalJobEnd {
  state: LocalFinalState;
  reason?: string;
  exitCode?: number;
  signal?: number;
  endTime: number;
}

export interface LocalJobSpec {
  id: string;
  scriptPath: string;
  workDir: string;
  stdoutPath: string;
  stderrPath: string;
  env: Record<string, string>;
  /** Named in the "*** JOB ... ON <node> CANCELLED ***" line, like slurmstepd does. */
  firstNode: string;
  /** Wall-clock limit in milliseconds; 0 or less means none (sbatch --time=0). */
  timeLimitMs: number;
  /** Between SIGTERM and SIGKILL on time limit and cancellation. */
  killGraceMs: number;
  /** The job's private folder, where the scancel shim leaves its marker. */
  jobDir: string;
}

// setTimeout fires at once for delays over 2^31-1 ms; no job runs 24 days, so clamp.
const MAX_TIMER_MS = 2 ** 31 - 1;

// Runs the job script under a watchdog reading the pipe the scheduler holds open as the job's
// stdin: when the scheduler's process dies, even by SIGKILL where no 'exit' handler runs, the pipe
// reaches EOF and the watchdog ends the job as a cancel would: SIGTERM to the group (the script's
// traps stop its steps), then, after the grace ($2 s), SIGKILL to every process that carries the
// job's id (steps the script started with setsid are outside the group) and to the group. The
// script itself gets /dev/null as stdin.
const LAUNCHER = `exec 3<&0 </dev/null
( trap '' TERM INT HUP
  read -r _ <&3
  kill -TERM 0; sleep "$2"
  for p in $(grep -lsz "^SLURM_JOB_ID=$SLURM_JOB_ID$" /proc/[0-9]*/environ | cut -d/ -f3); do
    [ "$p" = "$BASHPID" ] || kill -KILL "$p"
  done
  kill -KILL 0 ) >/dev/null 2>&1 &
exec 3<&-
exec bash "$1"`;

/**
 * SIGKILL to every process whose environment says it belongs to job `id` (Linux /proc; nothing
 * elsewhere): the steps a job script started in sessions of their own, which a group signal misses.
 */
export function killJobProcesses(id: string): void {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  } catch {
    return;
  }
  const marker = `SLURM_JOB_ID=${id}`;
  for (const pid of pids) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours to read
    }
  }
}

/** SLURM's timestamp: local time, second precision, no zone (2024-06-01T12:00:00). */
export function slurmTimestamp(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

function openLog(file: string): number {
  const { O_WRONLY, O_CREAT, O_TRUNC, O_APPEND } = fs.constants;
  // O_APPEND: the scheduler appends slurmstepd's lines while the job writes; neither overwrites.
  return fs.openSync(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644);
}

type Killer = { kind: 'timeout' } | { kind: 'cancel'; reason: string };

export class LocalJobProcess {
  /** Process id of `bash`, which is also the job's process group id; undefined if spawn failed. */
  readonly pgid: number | undefined;
  readonly startTime = Date.now();
  /** Settles once, never rejects. */
  readonly ended: Promise<LocalJobEnd>;

  private readonly child: ChildProcess | undefined;
  private killer: Killer | undefined;
  private limitTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private done = false;
  private resolveEnded!: (end: LocalJobEnd) => void;

  constructor(private readonly spec: LocalJobSpec) {
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    let out: number | undefined;
    let err: number | undefined;
    try {
      out = openLog(spec.stdoutPath);
      err = openLog(spec.stderrPath);
      this.child = spawn('bash', ['-c', LAUNCHER, 'disagg-local-job', spec.scriptPath, String(Math.ceil(spec.killGraceMs / 1000))], {
        cwd: spec.workDir,
        env: spec.env,
        detached: true, // setsid: the job leads a new session and process group
        stdio: ['pipe', out, err],
      });
      this.pgid = this.child.pid;
    } catch (error) {
      this.finish({ state: 'FAILED', reason: `could not start bash ${spec.scriptPath}: ${String(error)}` });
      return;
    } finally {
      if (out !== undefined) fs.closeSync(out);
      if (err !== undefined) fs.closeSync(err);
    }
    this.child.stdin?.on('error', () => {}); // EPIPE once the watchdog is gone: expected
    this.child.on('error', (error) => {
      this.finish({ state: 'FAILED', reason: `could not start bash ${spec.scriptPath}: ${error.message}` });
    });
    this.child.on('exit', (code, signal) => this.onExit(code, signal));
    if (spec.timeLimitMs > 0) {
      this.limitTimer = setTimeout(() => this.terminate({ kind: 'timeout' }), Math.min(spec.timeLimitMs, MAX_TIMER_MS));
      this.limitTimer.unref();
    }
  }

  /** SIGTERM to the group, SIGKILL after the grace; resolves when the job has ended. */
  cancel(reason: string): Promise<LocalJobEnd> {
    this.terminate({ kind: 'cancel', reason });
    return this.ended;
  }

  /**
   * SIGKILL to the whole group at once, synchronously (for process 'exit' and signal handlers);
   * with a reason, the job ends CANCELLED with it.
   */
  killNow(reason?: string): void {
    if (reason !== undefined && !this.done && !this.killer) this.killer = { kind: 'cancel', reason };
    this.signalGroup('SIGKILL');
    killJobProcesses(this.spec.id);
  }

  private terminate(killer: Killer): void {
    if (this.done || this.killer) return;
    this.killer = killer;
    const why = killer.kind === 'timeout' ? ' DUE TO TIME LIMIT' : '';
    const line = `slurmstepd: error: *** JOB ${this.spec.id} ON ${this.spec.firstNode} CANCELLED AT ${slurmTimestamp(new Date())}${why} ***\n`;
    try {
      fs.appendFileSync(this.spec.stderrPath, line);
    } catch {
      // The log folder was removed under a running job; the kill matters more than the line.
    }
    this.signalGroup('SIGTERM');
    this.graceTimer = setTimeout(() => this.signalGroup('SIGKILL'), this.spec.killGraceMs);
    this.graceTimer.unref();
  }

  private onExit(code: number | null, signalName: NodeJS.Signals | null): void {
    // The batch script is the job: what it left running dies with it, as under SLURM.
    this.signalGroup('SIGKILL');
    killJobProcesses(this.spec.id);
    const signal = signalName ? os.constants.signals[signalName] : undefined;
    const observed = { exitCode: code ?? undefined, signal };
    if (this.killer?.kind === 'timeout') {
      this.finish({ state: 'TIMEOUT', reason: 'TimeLimit', ...observed });
    } else if (this.killer?.kind === 'cancel') {
      this.finish({ state: 'CANCELLED', reason: this.killer.reason, ...observed });
    } else if (fs.existsSync(path.join(this.spec.jobDir, selfCancelMarker))) {
      this.finish({ state: 'CANCELLED', reason: 'scancel from inside the job', ...observed });
    } else if (code === 0) {
      this.finish({ state: 'COMPLETED', exitCode: 0 });
    } else if (code !== null) {
      this.finish({ state: 'FAILED', reason: 'NonZeroExitCode', exitCode: code });
    } else {
      this.finish({ state: 'FAILED', reason: `killed by ${signalName}`, signal });
    }
  }

  private finish(end: Omit<LocalJobEnd, 'endTime'>): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.limitTimer);
    clearTimeout(this.graceTimer);
    this.child?.stdin?.destroy();
    this.resolveEnded({ ...end, endTime: Date.now() });
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.pgid === undefined) return;
    try {
      process.kill(-this.pgid, signal);
    } catch {
      // ESRCH: the group is already empty.
    }
  }
}
