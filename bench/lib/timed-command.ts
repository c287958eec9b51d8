// Runs a command as a child process and times it from just before the spawn to its exit.
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';

export interface TimedRun {
  /** Epoch seconds just before the spawn and at the exit. */
  start: number;
  end: number;
  wallS: number;
  exitCode: number;
  /** stdout and stderr interleaved. */
  output: string;
}

export interface TimedOptions {
  cwd?: string;
  /** The child's whole environment (not merged with this process's). */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export const epochS = (): number => (performance.timeOrigin + performance.now()) / 1000;

export async function timedCommand(file: string, args: string[], options: TimedOptions = {}): Promise<TimedRun> {
  const start = epochS();
  const t0 = performance.now();
  const result = await execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: options.env === undefined,
    all: true,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs,
  });
  const wallS = (performance.now() - t0) / 1000;
  return { start, end: start + wallS, wallS, exitCode: result.exitCode ?? -1, output: String(result.all ?? '') };
}

/** The last `lines` lines of a command's output, for an error message. */
export function outputTail(output: string, lines = 30): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

export interface CpuTimedRun extends TimedRun {
  /** User + system CPU seconds of the command's whole process tree (what load stretches least). */
  cpuS: number;
}

/** timedCommand under /usr/bin/time: also the CPU time of the process tree; its line is taken out of the output. */
export async function timedCommandCpu(file: string, args: string[], options: TimedOptions = {}): Promise<CpuTimedRun> {
  const run = await timedCommand('/usr/bin/time', ['-f', 'CPU-TIMES %U %S', file, ...args], options);
  const times = /CPU-TIMES ([\d.]+) ([\d.]+)\s*$/.exec(run.output);
  if (!times) throw new Error(`/usr/bin/time printed no times for ${file} ${args.join(' ')} (is GNU time installed?):\n${outputTail(run.output)}`);
  return { ...run, output: run.output.slice(0, times.index), cpuS: Number(times[1]) + Number(times[2]) };
}
