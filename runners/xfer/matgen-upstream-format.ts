// matgen's files in kvbench's own format (`--cell-format upstream`), byte for byte as NIXL
// benchmark/kvbench/test/inference_workload_matgen.py writes them, so a user can diff the two:
// - a cell is gen_matrix()'s float, kv / tp / pp / cp / peers in float division, written by
//   format_size(): divided by 1024 while it stays >= 1 (units B, K, M, G), round(x, 2), then
//   Python's `{:g}` (6 significant digits) and the unit: `759.51M`, `0` for an empty cell;
// - metadata.yaml is PyYAML's yaml.dump of {traffic_patterns: [{matrix_file, sleep_before_launch_sec,
//   metadata: {isl}}]}: keys sorted (PyYAML's default), block style, sequences not indented under
//   their key, floats as Python's repr with PyYAML's `.0` before an exponent.
// Python's rounding is reproduced on the double's exact value (round-half-even, as round() and
// format() do), so every cell matches, ties included. The format loses bytes (2 decimals of a binary
// unit), which is why this project's default is exact bytes.

/** The exact value of a finite double as numerator / 2^shift (BigInt). */
function exactParts(x: number): { num: bigint; shift: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? -1n : 1n;
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n);
  const e = (exponent === 0 ? 1 : exponent) - 1075; // value = mantissa * 2^e
  return e >= 0 ? { num: sign * (mantissa << BigInt(e)), shift: 0n } : { num: sign * mantissa, shift: BigInt(-e) };
}

/** x rounded to `decimals` places (may be negative: tens, hundreds...), half to even on the exact value: the integer n of n / 10^decimals. */
function roundScaled(x: number, decimals: number): bigint {
  const { num, shift } = exactParts(x);
  const ten = 10n ** BigInt(Math.abs(decimals));
  // x * 10^decimals = num * scaleNum / (2^shift * scaleDen)
  const scaledNum = decimals >= 0 ? num * ten : num;
  const den = (1n << shift) * (decimals >= 0 ? 1n : ten);
  const negative = scaledNum < 0n;
  const a = negative ? -scaledNum : scaledNum;
  let q = a / den;
  const r = a - q * den;
  if (2n * r > den || (2n * r === den && q % 2n === 1n)) q += 1n;
  return negative ? -q : q;
}

/** Python's round(x, ndigits) for ndigits >= 0: the double nearest the half-even rounding of x's exact value. */
export function pythonRound(x: number, ndigits: number): number {
  return Number(roundScaled(x, ndigits)) / 10 ** ndigits;
}

/** Python's format(x, 'g'): 6 significant digits, trailing zeros dropped, exponent below 1e-4 or from 1e6. */
export function pythonG(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const precision = 6;
  let exp = Math.floor(Math.log10(Math.abs(x)));
  let digits = roundScaled(x, precision - 1 - exp);
  // rounding may carry into one more digit (999999.5 -> 1000000)
  if ((digits < 0n ? -digits : digits) >= 10n ** BigInt(precision)) {
    exp += 1;
    digits = roundScaled(x, precision - 1 - exp);
  }
  const negative = digits < 0n;
  const text = (negative ? -digits : digits).toString().padStart(precision, '0');
  const strip = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  let out: string;
  if (exp < -4 || exp >= precision) {
    out = `${strip(`${text[0]}.${text.slice(1)}`)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  } else if (exp >= 0) {
    out = strip(`${text.slice(0, exp + 1)}.${text.slice(exp + 1)}`);
  } else {
    out = strip(`0.${'0'.repeat(-exp - 1)}${text}`);
  }
  return negative ? `-${out}` : out;
}

/** kvbench's format_size(nbytes) (precision 2). */
export function formatSizeCell(nbytes: number): string {
  if (nbytes === 0) return '0';
  const units = ['B', 'K', 'M', 'G'];
  let unit = 0;
  let value = nbytes;
  while (value / 1024 >= 1 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${pythonG(pythonRound(value, 2))}${units[unit]}`;
}

/** Python's repr(float), as PyYAML writes a float: shortest round-trip digits, `.0` before an exponent, exponent below 1e-4 or from 1e16. */
export function pyyamlFloat(x: number): string {
  if (Number.isNaN(x)) return '.nan';
  if (!Number.isFinite(x)) return x > 0 ? '.inf' : '-.inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, e] = x.toExponential().split('e'); // shortest digits that round-trip
  const exp = Number(e);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  let out: string;
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : `${digits}.0`; // PyYAML adds the .0
    out = `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  } else if (exp >= 0) {
    const whole = digits.padEnd(exp + 1, '0');
    const fraction = whole.length > exp + 1 ? whole.slice(exp + 1) : '';
    out = `${whole.slice(0, exp + 1)}.${fraction || '0'}`;
  } else {
    out = `0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return negative ? `-${out}` : out;
}

/** One matrix file in kvbench's format: format_size cells, one row per line. */
export function upstreamMatrixText(cells: readonly (readonly number[])[]): string {
  return cells.map((row) => `${row.map(formatSizeCell).join(' ')}\n`).join('');
}

export interface UpstreamPatternEntry {
  matrixFile: string;
  sleepBeforeLaunchSec: number;
  isl: number;
  /** Fields this project writes into every pattern on request (--mem-type, --xfer-op, --shards); none in kvbench's. */
  extra?: Record<string, string | number>;
}

/** metadata.yaml as PyYAML's yaml.dump writes kvbench's (keys sorted, block style). */
export function upstreamMetadataYaml(entries: readonly UpstreamPatternEntry[]): string {
  const scalar = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : pyyamlFloat(v)) : v);
  if (entries.length === 0) return 'traffic_patterns: []\n'; // PyYAML's flow form of an empty list
  const lines = ['traffic_patterns:'];
  for (const e of entries) {
    const fields: [string, string][] = [
      ['matrix_file', e.matrixFile],
      ['metadata', ''],
      ['sleep_before_launch_sec', pyyamlFloat(e.sleepBeforeLaunchSec)],
      ...Object.entries(e.extra ?? {}).map(([k, v]): [string, string] => [k, scalar(v)]),
    ].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) as [string, string][];
    fields.forEach(([key, value], i) => {
      const lead = i === 0 ? '- ' : '  ';
      if (key === 'metadata') lines.push(`${lead}metadata:`, `    isl: ${e.isl}`);
      else lines.push(`${lead}${key}: ${value}`);
    });
  }
  return `${lines.join('\n')}\n`;
}
