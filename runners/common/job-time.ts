// slurm.job_time, as every test type spells it (`HH:MM:SS` or `D-HH:MM:SS`, SLURM's --time forms
// that the configs use), in seconds: one parser for the serving and the nixl types and their runners.
import { InputError } from './errors.ts';

export function jobTimeSeconds(jobTime: string): number {
  const match = /^(?:(\d+)-)?(\d{1,2}):(\d{2}):(\d{2})$/.exec(jobTime.trim());
  if (!match) throw new InputError(`job_time ${JSON.stringify(jobTime)} is not HH:MM:SS or D-HH:MM:SS`);
  const [, days, h, m, s] = match;
  return Number(days ?? 0) * 86_400 + Number(h) * 3600 + Number(m) * 60 + Number(s);
}
