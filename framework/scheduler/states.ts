// The one place the workload managers' state vocabularies are mapped onto JobState: SLURM's raw
// states (with suffixes and squeue's short codes), terminal or not, job ids in their
// array/het/step forms, exit codes, and the pending reasons that mean a job can never start; Grid
// Engine's qstat state letters and its accounting's end of a job. Pure functions.
import type { JobState } from './scheduler.ts';

/** States after which a job can no longer change (PREEMPTED depends on a setting, see isTerminal). */
export const TERMINAL_STATES: ReadonlySet<JobState> = new Set<JobState>([
  'BOOT_FAIL',
  'CANCELLED',
  'COMPLETED',
  'DEADLINE',
  'FAILED',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'TIMEOUT',
]);

export interface StateOptions {
  /**
   * Whether PREEMPTED is final. Sites with PreemptMode=CANCEL end preempted jobs (true); with
   * PreemptMode=REQUEUE the job comes back as PENDING (false). Default false.
   */
  preemptedIsTerminal?: boolean;
}

export interface ParsedState {
  state: JobState;
  /** What followed the state name (`by 1234` of `CANCELLED by 1234`), or the unmapped raw text. */
  detail?: string;
  /** The input, trimmed. */
  raw: string;
}

// Long names SLURM prints (sacct, squeue %T, scontrol JobState=) that are not JobState names.
const LONG_NAME_ALIASES: Record<string, JobState> = {
  STOPPED: 'SUSPENDED', // stopped by a signal, resumable
  SPECIAL_EXIT: 'REQUEUE_HOLD', // requeued and held after a special exit code
  REQUEUE_FED: 'REQUEUED',
  RESV_DEL_HOLD: 'PENDING', // held because its reservation was deleted; admin may release it
  REVOKED: 'CANCELLED', // federation: another cluster runs the job, this copy is gone
  POWER_UP_NODE: 'CONFIGURING',
  LAUNCH_FAILED: 'FAILED',
};

// squeue %t compact codes.
const SHORT_CODES: Record<string, JobState> = {
  BF: 'BOOT_FAIL',
  CA: 'CANCELLED',
  CD: 'COMPLETED',
  CF: 'CONFIGURING',
  CG: 'COMPLETING',
  DL: 'DEADLINE',
  F: 'FAILED',
  NF: 'NODE_FAIL',
  OOM: 'OUT_OF_MEMORY',
  PD: 'PENDING',
  PR: 'PREEMPTED',
  R: 'RUNNING',
  RD: 'PENDING',
  RF: 'REQUEUED',
  RH: 'REQUEUE_HOLD',
  RQ: 'REQUEUED',
  RS: 'RESIZING',
  RV: 'CANCELLED',
  S: 'SUSPENDED',
  SE: 'REQUEUE_HOLD',
  SI: 'SIGNALING',
  SO: 'STAGE_OUT',
  ST: 'SUSPENDED',
  TO: 'TIMEOUT',
};

const JOB_STATES: ReadonlySet<string> = new Set<JobState>([
  'PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'REQUEUE_HOLD',
  'RESIZING', 'STAGE_OUT', 'SIGNALING', 'PREEMPTED', 'COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED',
  'NODE_FAIL', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE', 'UNKNOWN',
]);

/**
 * Maps a raw state as SLURM prints it: `COMPLETED`, `CANCELLED by 0`, `CANCELLED+` (sacct's
 * truncation mark), `cancelled`, `CD`. Anything unrecognised becomes UNKNOWN with the raw text
 * as detail (never terminal, so a caller keeps waiting and shows the text).
 */
export function parseState(raw: string): ParsedState {
  const trimmed = raw.trim();
  const match = /^([A-Za-z_]+)\+?(?:\s+(.*))?$/.exec(trimmed);
  if (!match) return { state: 'UNKNOWN', detail: trimmed, raw: trimmed };
  const name = match[1].toUpperCase();
  const detail = match[2]?.trim() || undefined;
  if (JOB_STATES.has(name)) return { state: name as JobState, detail, raw: trimmed };
  // An alias keeps its own name as detail (STOPPED is not quite SUSPENDED); a short code does not.
  const alias = LONG_NAME_ALIASES[name];
  if (alias) return { state: alias, detail: [name, detail].filter(Boolean).join(' '), raw: trimmed };
  const coded = SHORT_CODES[name];
  if (coded) return { state: coded, detail, raw: trimmed };
  return { state: 'UNKNOWN', detail: trimmed, raw: trimmed };
}

/** True once the state can no longer change. UNKNOWN is not terminal: the caller decides. */
export function isTerminal(state: JobState, options: StateOptions = {}): boolean {
  if (state === 'PREEMPTED') return options.preemptedIsTerminal ?? false;
  return TERMINAL_STATES.has(state);
}

export interface ParsedJobId {
  /** The job (or array master / het leader) id, digits only. */
  jobId: string;
  /** `4` of `123_4`, `[1-3]` of `123_[1-3]` (a pending array's unstarted tasks). */
  arrayTask?: string;
  /** 0 of `123+0`. */
  hetOffset?: number;
  /** `batch`, `extern`, `0` of `123.batch`...: set for job steps, which are not jobs. */
  step?: string;
  /** The input, trimmed. */
  raw: string;
}

/** Parses SLURM job ids in all their printed forms; undefined when it is not an id at all. */
export function parseJobId(raw: string): ParsedJobId | undefined {
  const trimmed = raw.trim();
  const match = /^(\d+)(?:_(\d+|\[[\d,\-%:]+\]))?(?:\+(\d+))?(?:\.([A-Za-z0-9_+-]+))?$/.exec(trimmed);
  if (!match) return undefined;
  const [, jobId, arrayTask, het, step] = match;
  return {
    jobId,
    ...(arrayTask !== undefined && { arrayTask }),
    ...(het !== undefined && { hetOffset: Number(het) }),
    ...(step !== undefined && { step }),
    raw: trimmed,
  };
}

/** True for step ids (`123.batch`, `123.0`, `123_4.extern`), which poll results skip. */
export function isStepId(raw: string): boolean {
  return parseJobId(raw)?.step !== undefined;
}

export interface ParsedExit {
  exitCode?: number;
  signal?: number;
}

/** `3:0` (sacct/scontrol ExitCode: code, then the signal that ended it) -> { exitCode, signal }. */
export function parseExitCode(raw: string | undefined): ParsedExit {
  const match = /^\s*(\d+):(\d+)\s*$/.exec(raw ?? '');
  if (!match) return {};
  const exitCode = Number(match[1]);
  const signal = Number(match[2]);
  return signal > 0 ? { exitCode, signal } : { exitCode };
}

/** squeue's `exit_code` is a raw wait status (768 = exit 3, 15 = killed by SIGTERM). */
export function parseWaitStatus(raw: string | undefined): ParsedExit {
  const text = (raw ?? '').trim();
  if (!/^\d+$/.test(text)) return {};
  const status = Number(text);
  const signal = status & 0x7f;
  return signal > 0 ? { exitCode: 0, signal } : { exitCode: (status >> 8) & 0xff };
}

// Pending reasons that waiting will not cure: the job's own request breaks a partition, QOS or
// association rule, names something that does not exist, or depends on a job that failed.
// (Group limits, priority, resources, held or down partitions are transient and not listed.)
const NEVER_START_REASONS: ReadonlySet<string> = new Set([
  'AccountNotAllowed',
  'BadConstraints',
  'DependencyNeverSatisfied',
  'InvalidAccount',
  'InvalidQOS',
  'JobHoldMaxRequeue',
  'MaxMemPerLimit',
  'PartitionConfig',
  'PartitionNodeLimit',
  'PartitionTimeLimit',
  'QOSNotAllowed',
  // Requested nodes are down, drained or reserved; the reference counts it as never starting.
  'ReqNodeNotAvail',
  'ReservationDeleted',
]);

// Per-job and per-node QOS/association maxima (QOSMaxWallDurationPerJobLimit,
// AssocMaxGRESPerNode...) and QOS minima (QOSMinGRES, QOSMinCpuNotSatisfied...). Per-user and
// per-account limits are excluded: they clear when other jobs end.
const NEVER_START_PATTERN = /^(?:(?:QOS|Assoc)Max\w*Per(?:Job|Node)(?:Limit)?|QOSMin\w+)$/;

/**
 * The reason code of a pending job that can never start, or undefined. Accepts reasons with
 * details (`ReqNodeNotAvail, UnavailableNodes:n1`, `(PartitionConfig)`); `extra` adds site codes.
 */
export function neverStartReason(reason: string | undefined, extra: Iterable<string> = []): string | undefined {
  const code = /^\(?([A-Za-z]+)/.exec((reason ?? '').trim())?.[1];
  if (!code) return undefined;
  if (NEVER_START_REASONS.has(code) || NEVER_START_PATTERN.test(code)) return code;
  for (const site of extra) if (site === code) return code;
  return undefined;
}

/**
 * A Grid Engine job as qstat shows it (`qw`, `hqw`, `r`, `t`, `Rr`, `s`, `dr`, `Eqw`...): its
 * letters combine, and the strongest decides. Deletion under way: COMPLETING; an error state (E):
 * PENDING, since Grid Engine keeps it queued until someone clears it (the caller says why).
 */
export function gridEngineState(letters: string): JobState {
  const has = (letter: string) => letters.includes(letter);
  if (has('d')) return 'COMPLETING';
  if (has('E')) return 'PENDING';
  if (has('s') || has('S') || has('T')) return 'SUSPENDED';
  if (has('t')) return 'CONFIGURING';
  if (has('r')) return 'RUNNING';
  if (has('q') || has('w') || has('h')) return 'PENDING';
  return 'UNKNOWN';
}

/** A finished Grid Engine job's accounting record, as much as its end needs. */
export interface GridEngineEnd {
  failed: number;
  exitStatus: number;
  wallclockSec: number;
  /** Its h_rt, when this process submitted it. */
  timeLimitSec?: number;
  /** This process asked qdel to end it. */
  cancelledHere: boolean;
}

/** How a Grid Engine job ended, from its accounting record's `failed`, `exit_status` and wall clock. */
export function gridEngineEndState(end: GridEngineEnd): ParsedExit & { state: JobState } {
  // exit_status above 128 is 128 + the signal that ended the job script (qdel and h_rt: SIGKILL).
  const signal = end.exitStatus > 128 ? end.exitStatus - 128 : undefined;
  const exit = signal !== undefined ? { exitCode: 0, signal } : { exitCode: end.exitStatus };
  if (end.failed === 0 && end.exitStatus === 0) return { state: 'COMPLETED', ...exit };
  if (end.cancelledHere && (end.failed !== 0 || signal !== undefined)) return { state: 'CANCELLED', ...exit };
  // 37: the qmaster enforced h_rt; 100 with SIGKILL: killed on its node, by its h_rt or by a qdel.
  if (end.failed === 37) return { state: 'TIMEOUT', ...exit };
  if (end.failed === 100 && signal === 9) {
    const overTime = end.timeLimitSec !== undefined && end.wallclockSec >= end.timeLimitSec;
    return { state: overTime ? 'TIMEOUT' : 'CANCELLED', ...exit };
  }
  return { state: 'FAILED', ...exit };
}
