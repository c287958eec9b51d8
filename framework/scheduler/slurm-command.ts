// Running one SLURM client command (argument arrays, never a shell string), telling transient
// failures from permanent ones, and retrying the transient ones with exponential back-off.
import { SchedulerError } from './scheduler.ts';

export interface CommandOutcome {
  /** The command line for messages (arguments quoted where needed); never executed as a string. */
  command: string;
  ok: boolean;
  stdout: string;
  stderr: string;
  exitCode?: number;
  /** Why it failed when there is no stderr to say it (not found, timed out, killed). */
  failure?: string;
}

export interface RunOptions {
  /** Variables added to the inherited environment (SLURM_CONF, the job's own variables...). */
  env?: Record<string, string | undefined>;
  timeoutMs: number;
}

/** Quotes an argument for display only. */
function displayArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function formatCommand(file: string, args: readonly string[]): string {
  return [file, ...args].map(displayArg).join(' ');
}

/** Runs `file args`; never throws: the outcome says what happened. */
export async function runSlurmCommand(file: string, args: readonly string[], options: RunOptions): Promise<CommandOutcome> {
  const command = formatCommand(file, args);
  // Loaded at the first command, not with the scheduler: execa is ~150 modules, and every start
  // (`vitest list` included) registers the schedulers without running any.
  const { execa } = await import('execa');
  const result = await execa(file, args, {
    env: options.env,
    extendEnv: true,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs,
    stripFinalNewline: true,
  });
  const stdout = String(result.stdout ?? '');
  const stderr = String(result.stderr ?? '');
  if (!result.failed) return { command, ok: true, stdout, stderr, exitCode: 0 };
  let failure: string | undefined;
  if (result.code === 'ENOENT') failure = `${file} not found on PATH`;
  else if (result.timedOut) failure = `timed out after ${options.timeoutMs} ms`;
  else if (result.signal) failure = `killed by ${result.signal}`;
  return { command, ok: false, stdout, stderr, exitCode: result.exitCode, failure };
}

// Messages of SLURM clients (and munge under them) that a later attempt may not see: the
// controller restarting, overloaded or briefly unreachable.
const TRANSIENT_PATTERNS: readonly RegExp[] = [
  /socket timed out/i,
  /resource temporarily unavailable/i,
  /unable to contact slurm controller/i,
  /connection refused/i,
  /connection reset by peer/i,
  /transport endpoint is not connected/i,
  /zero bytes were transmitted or received/i,
  /communication connection failure/i,
  /slurm temporarily unable to accept job/i,
  /slurmctld.*(?:busy|not responding)/i,
  /backup controller in standby mode/i,
  /unable to establish controller machine/i,
  /Munge (?:encode|decode) failed: .*(?:socket|connect)/i,
  // Grid Engine's clients (qsub, qdel) when the qmaster is restarting or busy.
  /unable to contact qmaster/i,
  /commlib error: (?:can't connect|got read error|got select error)/i,
  /failed receiving gdi request/i,
];

export function isTransientFailure(outcome: CommandOutcome): boolean {
  if (outcome.failure?.includes('not found on PATH')) return false;
  const text = `${outcome.stderr}\n${outcome.failure ?? ''}`;
  return TRANSIENT_PATTERNS.some((pattern) => pattern.test(text));
}

function tail(text: string, lines = 15): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** A SchedulerError that says what ran, how it ended and what it printed on stderr. */
export function commandError(outcome: CommandOutcome, what: string, attempts = 1): SchedulerError {
  const stderr = tail(outcome.stderr);
  const how = outcome.failure ?? `exit code ${outcome.exitCode ?? '?'}`;
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  const message = `${what} failed${tries}: ${how}\n  command: ${outcome.command}${stderr ? `\n  stderr: ${stderr}` : ''}`;
  return new SchedulerError(message, outcome.command, outcome.exitCode, stderr);
}

export interface RetryOptions {
  /** Attempts after the first. */
  retries: number;
  /** Delay before the first retry; doubled before each next one. */
  baseDelayMs: number;
}

/**
 * Runs `attempt` until it succeeds, fails permanently, or `retries` transient failures were
 * retried; resolves to the last outcome and the number of attempts made.
 */
export async function retryTransient(
  attempt: () => Promise<CommandOutcome>,
  options: RetryOptions,
): Promise<{ outcome: CommandOutcome; attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    const outcome = await attempt();
    if (outcome.ok || !isTransientFailure(outcome) || attempts > options.retries) return { outcome, attempts };
    await new Promise((resolve) => setTimeout(resolve, options.baseDelayMs * 2 ** (attempts - 1)));
  }
}
