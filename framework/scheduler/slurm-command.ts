// Running one SLURM client command (argument arrays, never a shell string), telling transient
// failures from permanent ones, and retrying the transient ones with exponential back-off.
import { spawn } from 'node:child_process';
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
export function runSlurmCommand(file: string, args: readonly string[], options: RunOptions): Promise<CommandOutcome> {
  const command = formatCommand(file, args);
  // node:child_process itself: a scheduler command is on the path of every submission and poll,
  // and a process-running library's modules and per-call work would be in each of them.
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      // spawn throws at once for what it cannot even try (a NUL byte in an argument or variable)
      return resolve({ command, ok: false, stdout: '', stderr: '', failure: (error as Error).message });
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      // A command that ignores SIGTERM is killed outright a little later.
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }, options.timeoutMs);
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (error: NodeJS.ErrnoException) => (spawnError = error));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
      const stdout = text(out);
      const stderr = text(err);
      if (!spawnError && !timedOut && code === 0) return resolve({ command, ok: true, stdout, stderr, exitCode: 0 });
      let failure: string | undefined;
      if (spawnError?.code === 'ENOENT') failure = `${file} not found on PATH`;
      else if (spawnError) failure = spawnError.message;
      else if (timedOut) failure = `timed out after ${options.timeoutMs} ms`;
      else if (signal) failure = `killed by ${signal}`;
      resolve({ command, ok: false, stdout, stderr, exitCode: code ?? undefined, failure });
    });
  });
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
