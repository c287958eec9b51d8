// Option values shared by the bench commands: sizes with binary units, gflags-style booleans,
// positive integers and lists, each failing with the option's name and the bad value.
import { parseSize } from '../../../common/size.ts';

export class BenchOptionError extends Error {
  override name = 'BenchOptionError';
}

/** Bytes: an integer, or a number with K/M/G (binary; KiB/MiB/GiB too): '4096', '64M', '8GiB'. */
export function sizeOption(name: string, raw: string): number {
  try {
    return parseSize(raw.trim());
  } catch (err) {
    throw new BenchOptionError(`--${name}: ${(err as Error).message}`);
  }
}

export function intOption(name: string, raw: string, min = 1): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new BenchOptionError(`--${name} takes a whole number >= ${min}, got '${raw}'`);
  return n;
}

export function numberOption(name: string, raw: string, min = 0): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new BenchOptionError(`--${name} takes a number >= ${min}, got '${raw}'`);
  return n;
}

export function choiceOption<T extends string>(name: string, raw: string, choices: readonly T[], caseInsensitive = true): T {
  const found = choices.find((c) => (caseInsensitive ? c.toLowerCase() === raw.toLowerCase() : c === raw));
  if (!found) throw new BenchOptionError(`--${name} must be one of ${choices.join(', ')}, got '${raw}'`);
  return found;
}

/** A comma-separated list, each item through `item`. */
export function listOption<T>(name: string, raw: string, item: (name: string, raw: string) => T): T[] {
  const parts = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) throw new BenchOptionError(`--${name} is empty`);
  return parts.map((p) => item(name, p));
}

/**
 * gflags accepts `--flag`, `--flag=true|false|1|0` and `--noflag` for booleans; node's parseArgs
 * only `--flag`. Rewrites the others for the named boolean flags (true -> `--flag`, false -> dropped).
 */
export function normalizeBooleanFlags(argv: string[], booleans: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    const m = /^--([A-Za-z0-9_-]+)(?:=(.*))?$/s.exec(arg);
    let flag = m?.[1] ?? '';
    let negated = false;
    if (m && !booleans.includes(flag) && flag.startsWith('no') && booleans.includes(flag.slice(2))) {
      flag = flag.slice(2);
      negated = true;
    }
    if (!m || !booleans.includes(flag)) {
      out.push(arg);
      continue;
    }
    let value = true;
    if (m[2] !== undefined) {
      if (/^(1|true|yes)$/i.test(m[2])) value = true;
      else if (/^(0|false|no)$/i.test(m[2])) value = false;
      else throw new BenchOptionError(`--${flag} takes true or false, got '${m[2]}'`);
    }
    if (value !== negated) out.push(`--${flag}`);
  }
  return out;
}
