// The suite's process mark: the cluster project's global setup adds an id of its own to
// DISAGG_TEST_SUITE_IDS before anything starts, so every process the suite starts inherits it
// (workers, ranks, stand-in servers, etcd, job processes: sbatch exports the environment; a
// nested suite adds its own id and keeps ours). At the end, a process whose environment still
// carries our id outlived the test that started it: the leak check names it, ends it and fails
// the suite.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { processArgv, processStat } from '../../runners/common/proc.ts';

export const SUITE_IDS_VARIABLE = 'DISAGG_TEST_SUITE_IDS';

/** Adds a fresh id to DISAGG_TEST_SUITE_IDS of this process (inherited by all it starts); returns it. */
export function markSuiteProcesses(env: NodeJS.ProcessEnv = process.env): string {
  const id = `suite-${process.pid}-${randomBytes(4).toString('hex')}`;
  env[SUITE_IDS_VARIABLE] = [env[SUITE_IDS_VARIABLE], id].filter(Boolean).join(' ');
  return id;
}

export interface MarkedProcess {
  pid: number;
  /** Its command line, arguments separated by spaces. */
  command: string;
  /**
   * Where it came from, for finding the test that left it: its parent, its SLURM job (id and
   * cluster) when it ran in one, its working folder.
   */
  origin?: string;
}

/**
 * Live processes (zombies excluded) whose environment carries `id` in DISAGG_TEST_SUITE_IDS,
 * except `exclude` and the direct children of this process (Vitest's own workers and helpers:
 * they end when Vitest closes, after the global teardown).
 */
export function markedProcesses(id: string, exclude: ReadonlySet<number> = new Set()): MarkedProcess[] {
  const found: MarkedProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid || exclude.has(pid)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    const value = environ.split('\0').find((v) => v.startsWith(`${SUITE_IDS_VARIABLE}=`));
    if (!value?.slice(SUITE_IDS_VARIABLE.length + 1).split(' ').includes(id)) continue;
    const info = processStat(pid);
    if (!info || info.state === 'Z' || info.ppid === process.pid) continue;
    const argv = processArgv(pid);
    if (!argv) continue; // ended while we looked
    const command = argv.join(' ');
    found.push({ pid, command, origin: originOf(pid, info.ppid, environ) });
  }
  return found;
}

function originOf(pid: number, ppid: number, environ: string): string {
  const variable = (name: string) => environ.split('\0').find((v) => v.startsWith(`${name}=`))?.slice(name.length + 1);
  const parent = ppid > 1 ? processArgv(ppid)?.join(' ').slice(0, 80) : undefined;
  const parts = [`parent ${ppid}${parent ? ` (${parent})` : ''}`];
  const job = variable('SLURM_JOB_ID');
  if (job) parts.push(`SLURM job ${job} of ${variable('SLURM_CONF') ?? 'the default cluster'}`);
  try {
    parts.push(`in ${readlinkSync(`/proc/${pid}/cwd`)}`);
  } catch {
    // gone, or not ours to read
  }
  return parts.join('; ');
}

/**
 * Waits (up to `graceMs`: processes being stopped by the last hooks take a moment) until no
 * marked process is left; returns those still alive then, after sending each SIGKILL.
 */
export async function collectLeaks(id: string, options: { exclude?: ReadonlySet<number>; graceMs?: number } = {}): Promise<MarkedProcess[]> {
  const deadline = Date.now() + (options.graceMs ?? 30_000);
  for (;;) {
    const left = markedProcesses(id, options.exclude);
    if (left.length === 0) return [];
    if (Date.now() >= deadline) {
      for (const p of left) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      return left;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * `slurm-local.sh down`'s warning that it killed processes of the cluster's jobs which outlived its
 * daemons (the line, or undefined when there is none).
 */
export function outlivedWarning(downOutput: string): string | undefined {
  return /\d+ process\(es\) of this cluster's jobs outlived its daemons[^\n]*/.exec(downOutput)?.[0];
}

/** The suite's failure message for leaked processes. */
export function describeLeaks(leaks: MarkedProcess[]): string {
  const lines = leaks.slice(0, 20).map((p) =>
    `  pid ${p.pid}: ${p.command.length > 200 ? `${p.command.slice(0, 200)}...` : p.command}${p.origin ? `\n    (${p.origin})` : ''}`);
  if (leaks.length > 20) lines.push(`  ... and ${leaks.length - 20} more`);
  return `leak check: ${leaks.length} process(es) started by this test run were still running at its end (now killed); the test that started each must stop it:\n${lines.join('\n')}`;
}
