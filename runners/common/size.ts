// Size tokens (options, config values, matrix cells) read as kvbench reads them (NIXL
// benchmark/kvbench main.py, parse_size): a number as Python's float() takes it (1024, 1.5, .5, 1e3,
// 1_000) with an optional last-letter unit K, M, G (BINARY: 1024, 1024^2, 1024^3) or B, any case.
// Beyond kvbench: KiB/MiB/GiB; negative sizes and counts past 2^53 - 1 (not exact as a number) are
// refused. UCC's alltoallv perftest reads M/G as 1e6/1e9: this does not.
import { InputError } from './errors.ts';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};
const DIGITS = String.raw`\d(?:_?\d)*`;
/** A Python float literal (sign, underscores between digits, exponent), then a unit. */
const SIZE = new RegExp(String.raw`^([+-]?(?:(?:${DIGITS})?\.${DIGITS}|${DIGITS}\.?)(?:[eE][+-]?${DIGITS})?)([a-zA-Z]*)$`);

/** The value a size token stands for, in bytes, maybe fractional; throws a message without position. */
export function sizeValue(token: string): number {
  const match = SIZE.exec(token);
  const unit = match ? UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new InputError(`'${token}' is not a size (bytes, or a number with a unit K, M, G = 1024, 1024^2, 1024^3, or B)`);
  }
  const value = Number(match[1].replace(/_/g, '')) * unit; // as kvbench: unit * float(number)
  if (value < 0) throw new InputError(`'${token}' is negative: a size is 0 bytes or more`);
  if (!(Math.trunc(value) <= Number.MAX_SAFE_INTEGER)) {
    const bytes = Number.isFinite(value) ? BigInt(Math.trunc(value)).toString() : String(value);
    throw new InputError(`'${token}' is too large to be a safe integer: ${bytes} bytes is more than 2^53 - 1 = ${Number.MAX_SAFE_INTEGER}, the largest byte count held exactly`);
  }
  return value;
}

/** Bytes of a size option or config value: whole bytes only ('0.3K' is refused, not truncated). */
export function parseSize(token: string): number {
  const value = sizeValue(token);
  if (!Number.isInteger(value)) throw new InputError(`'${token}' is not a whole number of bytes (${value})`);
  return value;
}
