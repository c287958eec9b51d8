// JSON text exactly as Python's json.dumps writes it (ensure_ascii, floats as repr(): `5.0`,
// `1e-05`, `1.5e+16`), for two of upstream's needs: a document's `_id` is the MD5 of
// json.dumps(doc, sort_keys=True, indent=2) (jenkins/scripts/open_search_db.py add_id_of_json),
// and OpenSearchDB.typeCheckForOpenSearchDB wants every d_ value a Python float, so a d_ number
// must be written with a fraction (`5.0`, never `5`) to be read back as one.
import { pythonFloatRepr } from '../results/python-float.ts';

export type PyValue = string | number | boolean | null | PyValue[] | { [key: string]: PyValue };

const escapeString = (s: string) => JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export interface DumpOptions {
  /** Spaces per level (Python's indent); undefined = one line with ', ' and ': ' separators. */
  indent?: number;
  sortKeys?: boolean;
  /** Numbers under these keys are floats (d_ fields); others are written as ints when whole. */
  isFloatKey?: (key: string) => boolean;
}

export function pyDumps(value: PyValue, options: DumpOptions = {}, key = '', level = 0): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return escapeString(value);
  if (typeof value === 'number') return options.isFloatKey?.(key) || !Number.isInteger(value) ? pythonFloatRepr(value, 'json') : String(value);
  const pad = (n: number) => (options.indent === undefined ? '' : `\n${' '.repeat(options.indent * n)}`);
  const sep = options.indent === undefined ? ', ' : ',';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${value.map((v) => pad(level + 1) + pyDumps(v, options, key, level + 1)).join(sep)}${pad(level)}]`;
  }
  let keys = Object.keys(value);
  if (keys.length === 0) return '{}';
  if (options.sortKeys) keys = keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${pad(level + 1)}${escapeString(k)}: ${pyDumps(value[k], options, k, level + 1)}`).join(sep)}${pad(level)}}`;
}
