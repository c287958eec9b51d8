// What an unquoted, untagged YAML scalar is, as PyYAML's safe_load reads it (YAML 1.1: its
// resolver.py implicit resolvers, tried in their order, and constructor.py's SafeConstructor):
// `yes/no/on/off/true/false` in their three spellings (`yes`, `Yes`, `YES`) are booleans; `017` is
// octal (15), `0b101` binary (5), `1_000` is 1000, `1:30` is sexagesimal (90); a float needs a
// point and a signed exponent (`1.0e+3`; `1e3` and `1.0e3` are strings); `2002-12-14` is a date
// and `2002-12-14 10:00:00` a date and time; `=` has no constructor (PyYAML refuses it). Upstream
// loads its configs and kvbench its traffic patterns with PyYAML, so a value means here what it
// means there. The `yaml` library's YAML 1.2 core schema differs on every one of these.

export type PlainScalar = { value: unknown; problem?: undefined } | { value?: undefined; problem: string };

const BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const FLOAT = /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const NULL = /^(?:~|null|Null|NULL|)$/;
const TIMESTAMP = /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/;
const TIMESTAMP_PARTS = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)?$/;

/** The value of a plain scalar's text, or why PyYAML cannot construct one. */
export function resolvePlainScalar(text: string): PlainScalar {
  if (BOOL.test(text)) return { value: /^(?:yes|true|on)$/i.test(text) };
  if (FLOAT.test(text)) return { value: pythonFloat(text) };
  if (INT.test(text)) return pythonInt(text);
  if (NULL.test(text)) return { value: null };
  if (TIMESTAMP.test(text)) return timestamp(text);
  if (text === '=') return { problem: "a plain '=' is YAML 1.1's value key, which PyYAML cannot construct; quote it ('=') for the text" };
  return { value: text };
}

/** construct_yaml_float: underscores dropped, `.inf`/`.nan`, `a:b.c` in base 60. */
function pythonFloat(text: string): number {
  let value = text.replace(/_/g, '').toLowerCase();
  const sign = value.startsWith('-') ? -1 : 1;
  if (/^[-+]/.test(value)) value = value.slice(1);
  if (value === '.inf') return sign * Infinity;
  if (value === '.nan') return NaN;
  if (value.includes(':')) return sign * value.split(':').reduce((total, part) => total * 60 + Number(part), 0);
  return sign * Number(value);
}

/**
 * construct_yaml_int: underscores dropped, `0b` binary, `0x` hex, a leading 0 octal, `a:b` base 60.
 * Whole numbers beyond 2^53 - 1 are refused: JavaScript would hold them rounded, silently.
 */
function pythonInt(text: string): PlainScalar {
  let value = text.replace(/_/g, '');
  const negative = value.startsWith('-');
  if (/^[-+]/.test(value)) value = value.slice(1);
  let whole: bigint;
  if (value === '') return { problem: `${text} is no whole number (PyYAML fails on it: nothing but underscores)` };
  if (value === '0') whole = 0n;
  else if (value.startsWith('0b') || value.startsWith('0x')) {
    if (value.length === 2) return { problem: `${text} is no whole number (PyYAML fails on it: no digits after ${value})` };
    whole = BigInt(value);
  } else if (value.startsWith('0')) whole = BigInt(`0o${value.slice(1)}`);
  else if (value.includes(':')) whole = value.split(':').reduce((total, part) => total * 60n + BigInt(part), 0n);
  else whole = BigInt(value);
  if (negative) whole = -whole;
  if (whole > BigInt(Number.MAX_SAFE_INTEGER) || whole < -BigInt(Number.MAX_SAFE_INTEGER)) {
    return { problem: `${text} is a whole number beyond ${Number.MAX_SAFE_INTEGER} (2^53 - 1), the largest held exactly here; it would be read as ${Number(whole)}` };
  }
  return { value: Number(whole) };
}

/**
 * construct_yaml_timestamp: a date, or a date and time (its offset applied; none: read as UTC),
 * as a JavaScript Date. A day or month that does not exist is refused, as Python's datetime does.
 */
function timestamp(text: string): PlainScalar {
  const m = TIMESTAMP_PARTS.exec(text)!;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  date.setUTCFullYear(year);
  const exists = date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  if (!exists || year < 1) return { problem: `${text} reads as a date (YAML 1.1, as PyYAML reads it) but is no valid one; quote it for the text` };
  if (m[9]) {
    const offset = (Number(m[10]) * 60 + Number(m[11] ?? 0)) * (m[9] === '-' ? -1 : 1);
    date.setTime(date.getTime() - offset * 60_000);
  }
  return { value: date };
}
