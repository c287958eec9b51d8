// Option values shared by the bench commands: sizes with binary units, positive integers, choices
// and lists (the sweep's gflags forms: runners/common/args/gflags.ts), each failing with the option's name and the bad value.
import { parseSize } from '../../../common/size.ts';
import { UsageError } from '../../../common/errors.ts';

/** A bad option of a bench command is the project's one usage error (exit 2, or its upstream tool's code). */
export { UsageError };

/** Bytes: an integer, or a number with K/M/G (binary; KiB/MiB/GiB too): '4096', '64M', '8GiB'. */
export function sizeOption(name: string, raw: string): number {
  try {
    return parseSize(raw.trim());
  } catch (err) {
    throw new UsageError(`--${name}: ${(err as Error).message}`);
  }
}

export function intOption(name: string, raw: string, min = 1): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} takes a whole number >= ${min}, got '${raw}'`);
  return n;
}

export function numberOption(name: string, raw: string, min = 0): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} takes a number >= ${min}, got '${raw}'`);
  return n;
}

export function choiceOption<T extends string>(name: string, raw: string, choices: readonly T[], caseInsensitive = true): T {
  const found = choices.find((c) => (caseInsensitive ? c.toLowerCase() === raw.toLowerCase() : c === raw));
  if (!found) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got '${raw}'`);
  return found;
}

/** A comma-separated list, each item through `item`. */
export function listOption<T>(name: string, raw: string, item: (name: string, raw: string) => T): T[] {
  const parts = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) throw new UsageError(`--${name} is empty`);
  return parts.map((p) => item(name, p));
}
