// Python's repr() of a float, for the files upstream's tools read back (perf CSV, OpenSearch JSON).
/** How Python writes a float that is not finite: repr() (`nan`, `inf`) or json.dumps (`NaN`, `Infinity`). */
export type NonFiniteSpelling = 'repr' | 'json';

const NON_FINITE: Record<NonFiniteSpelling, { nan: string; inf: string }> = {
  repr: { nan: 'nan', inf: 'inf' },
  json: { nan: 'NaN', inf: 'Infinity' },
};

/**
 * A float as Python's repr writes it (pandas' to_csv of a float column, json.dumps): the shortest
 * digits that read back the same, `.0` on whole numbers, exponent form below 1e-4 and from 1e16
 * with two exponent digits at least (`1e-05`, `1.5e+16`); nan and inf as `nonFinite` spells them.
 */
export function pythonFloatRepr(x: number, nonFinite: NonFiniteSpelling = 'repr'): string {
  if (Number.isNaN(x)) return NON_FINITE[nonFinite].nan;
  if (!Number.isFinite(x)) return `${x > 0 ? '' : '-'}${NON_FINITE[nonFinite].inf}`;
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = x.toExponential().split('e');
  const exponent = Number(exp);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  if (exponent < -4 || exponent >= 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${body}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}.${fraction || '0'}`;
}

